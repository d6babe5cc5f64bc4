export * from './database';
export * from './event-store.errors';
export * from './event-store.types';
export * from './event-store.repository';
export * from './snapshot.repository';
export * from './outbox.relay';
export * from './migrate';
export * from './event-store.module';
