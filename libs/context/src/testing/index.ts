export * from './prose.factory';
export * from './context.factory';
