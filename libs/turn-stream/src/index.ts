export * from './turn-stream.frames';
export * from './turn-stream';
export * from './turn-stream.hub';
export * from './turn-stream.module';
