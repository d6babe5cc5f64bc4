export * from './adventure.factory';
export * from './plain-view';
