export * from './adventure.events';
export * from './adventure.commands';
export * from './adventure.errors';
export * from './adventure.limits';
export * from './adventure.state';
export * from './adventure.projector';
export * from './adventure.decider';
export * from './adventure.queries';
export * from './adventure.validation';
export * from './event.upcaster';
export * from './narration-failure';
export * from './player-input.format';
export * from './memory.events';
export * from './memory.state';
export * from './memory.queries';
export * from './memory.decider';
export { MemoryProjectionError } from './memory.projector';
export * from './script.events';
export * from './script.decider';
export { scriptStateAtHead } from './script.projector';
export type { NarrativeCorrection } from './narrative.port';
// Test factories are pure and small; exported so other libs' and apps' tests build histories
// through the alias (the only way they may import this lib).
export * from './testing';
export * from './event.validation';
