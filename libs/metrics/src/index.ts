export * from './chronicle-metrics';
export * from './metered-model.client';
export * from './metrics.server';
export * from './metrics.module';
