export * from './turn-stream';
