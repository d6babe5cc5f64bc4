import { OFFLINE_EMBEDDING_MODEL } from './offline.embedder';
import { OFFLINE_MODEL } from './offline.narrator';

/** Models that cost nothing (the built-in offline pair): their usage is never charged. */
export const FREE_MODELS: readonly string[] = [OFFLINE_MODEL, OFFLINE_EMBEDDING_MODEL];
