export * from './memory.constants';
export * from './cast-brief';
export * from './memory.prompts';
export * from './memory.plan';
export * from './memory.ranking';
export * from './memory-work.decider';
export * from './recall.query';
export * from './passage.fusion';
