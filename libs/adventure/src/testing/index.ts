export * from './adventure.factory';
export * from './plain-view';
export * from './room.factory';
