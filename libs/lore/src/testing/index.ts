export * from './lore.fixtures';
