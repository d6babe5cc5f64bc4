export * from './config';
export * from './logger';
export * from './preflight';
export * from './bootstrap';
export * from './control-plane';
export * from './runtime';
export * from './lru.cache';
export * from './redis-connection.factory';
