export * from './adventure.repository';
export * from './adventure-store.module';
export * from './turn-context';
