export * from './sandbox.pool';
export type { CompileProblem } from './sandbox.protocol';
export { HARNESS_SOURCE } from './sandbox.harness';
export * from './script-sandbox.module';
