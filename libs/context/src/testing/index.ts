export * from './prose.factory';
export * from './context.factory';
export * from './seed-reference';
