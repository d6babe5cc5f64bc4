export * from './adventure.factory';
