export * from './embedding.repository';
export * from './vector.cache';
export * from './memory-retrieval.service';
export * from './update-memory.use-case';
export * from './model-usage';
export * from './memory-store.module';
