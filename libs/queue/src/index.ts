export * from './queue.registry';
export * from './queue.producer';
export * from './queue.module';
export * from './redis-connection.factory';
export * from './redis-settings';
export * from './queue-worker.modules';
