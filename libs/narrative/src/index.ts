export * from './narrative.types';
