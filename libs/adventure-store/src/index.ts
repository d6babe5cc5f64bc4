export * from './adventure.command-handler';
export * from './adventure-store.module';
export * from './turn-context';
export * from './snapshot.codec';
export * from './replay';
export * from './adventure-export';
export * from './adventure-import';
export * from './adventure-infrastructure';
