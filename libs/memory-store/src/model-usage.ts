// What the memory worker's model calls cost, as the log records them.
import type { ModelCallUsage } from '@chronicle/adventure';
import type { CompletionResult } from '@chronicle/llm';

/** A completion's cost as the log records it. */
export function usageOf(result: Pick<CompletionResult, 'usage' | 'model'>): ModelCallUsage {
  return {
    model: result.model,
    promptTokens: result.usage.promptTokens,
    completionTokens: result.usage.completionTokens,
    cachedTokens: result.usage.cachedTokens,
  };
}

/** Several calls' costs as one (a regeneration folds chunk by chunk); null for none. */
export function sumUsage(usages: readonly ModelCallUsage[]): ModelCallUsage | null {
  if (usages.length === 0) return null;
  return usages.reduce((sum, usage) => ({
    model: usage.model,
    promptTokens: sum.promptTokens + usage.promptTokens,
    completionTokens: sum.completionTokens + usage.completionTokens,
    cachedTokens: (sum.cachedTokens ?? 0) + (usage.cachedTokens ?? 0),
  }));
}
