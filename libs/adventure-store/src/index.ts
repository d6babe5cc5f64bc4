export * from './adventure.repository';
export * from './adventure-store.module';
