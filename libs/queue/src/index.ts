export * from './queue.registry';
export * from './queue.producer';
export * from './queue.module';
export * from './queue-worker.modules';
export * from './provider-limiter';
export * from './user-leases';
