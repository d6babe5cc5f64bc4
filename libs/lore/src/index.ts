export * from './lore.types';
export * from './lore.codec';
export * from './containers';
export * from './decorators';
export {
  IMPORT_FORMATS,
  normaliseRead,
  openLoreFile,
  readLoreFile,
  sniffFormat,
} from './lore.import';
export * from './lore.export';
