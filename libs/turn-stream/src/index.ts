export * from './turn-stream';
export * from './turn-stream.hub';
export * from './turn-stream.module';
