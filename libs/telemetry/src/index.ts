export * from './tracing';
export * from './tracing.sdk';
