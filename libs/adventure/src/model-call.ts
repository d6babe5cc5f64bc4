// What a model call cost, in its own file: the adventure's and the memory bank's events both
// carry it, and neither events file should have to import the other for it.

/**
 * What one model call cost, as every event recording a model call's result carries it in
 * `data.usage` (Narrated, MemoryWritten, SummaryWritten, ModelUsageRecorded; see the event
 * catalogue's `usage`). The daily budget and the cost ledger sum these.
 */
export interface ModelCallUsage {
  model: string;
  promptTokens: number;
  completionTokens: number;
  cachedTokens?: number;
}

/** What a model call with no other event to record it was for. */
export type ModelCallPurpose = 'narration' | 'memory' | 'summary' | 'embedding' | 'retrieval';
