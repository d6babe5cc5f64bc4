export * from './turn-stream';
export * from './turn-stream.module';
