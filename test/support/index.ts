export * from './database';
export * from './app-processes';
export * from './sse-client';
export * from './history-checker';
export * from './private-postgres';
export * from './private-redis';
export * from './private-redis-cluster';
export * from './interposing-event-store';
