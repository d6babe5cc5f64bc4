export * from './database';
export * from './app-processes';
export * from './sse-client';
export * from './restartable-redis';
