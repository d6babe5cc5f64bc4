// What a model call costs: a price table per model, in US dollars per million tokens, for
// uncached input, cached input and output. A default table covers common models; an
// installation overrides or extends it with a JSON file (MODEL_PRICES_FILE) or a JSON value
// (MODEL_PRICES), both read and validated at start-up like every other setting.

export interface ModelPrice {
  /** USD per million prompt tokens not served from the provider's cache */
  input: number;
  /** USD per million prompt tokens served from the cache */
  cachedInput: number;
  /** USD per million completion tokens */
  output: number;
}

export type ModelPriceTable = Readonly<Record<string, ModelPrice>>;

/**
 * List prices of common models as published by their providers at the time of writing (check
 * yours: a provider's current price wins, so override it rather than trust this table).
 * Embedding models have no cached or output price.
 */
export const DEFAULT_MODEL_PRICES: ModelPriceTable = Object.freeze({
  'gpt-4o-mini': { input: 0.15, cachedInput: 0.075, output: 0.6 },
  'gpt-4o': { input: 2.5, cachedInput: 1.25, output: 10 },
  'gpt-4.1': { input: 2, cachedInput: 0.5, output: 8 },
  'gpt-4.1-mini': { input: 0.4, cachedInput: 0.1, output: 1.6 },
  'gpt-4.1-nano': { input: 0.1, cachedInput: 0.025, output: 0.4 },
  'gpt-5': { input: 1.25, cachedInput: 0.125, output: 10 },
  'gpt-5-mini': { input: 0.25, cachedInput: 0.025, output: 2 },
  'gpt-5-nano': { input: 0.05, cachedInput: 0.005, output: 0.4 },
  'o4-mini': { input: 1.1, cachedInput: 0.275, output: 4.4 },
  'text-embedding-3-small': { input: 0.02, cachedInput: 0.02, output: 0 },
  'text-embedding-3-large': { input: 0.13, cachedInput: 0.13, output: 0 },
  'deepseek-chat': { input: 0.27, cachedInput: 0.07, output: 1.1 },
  'claude-sonnet-4': { input: 3, cachedInput: 0.3, output: 15 },
  'claude-3.5-haiku': { input: 0.8, cachedInput: 0.08, output: 4 },
});

/** Thrown with a message that names the model and the field to fix. */
export class PriceTableError extends Error {}

const PRICE_FIELDS = ['input', 'cachedInput', 'output'] as const;

/** A price table from JSON text: `{ "<model>": { "input": n, "cachedInput": n, "output": n } }`. */
export function parseModelPrices(json: string): ModelPriceTable {
  let raw: unknown;
  try {
    raw = JSON.parse(json);
  } catch {
    throw new PriceTableError('must be a JSON object of model → {input, cachedInput, output}');
  }
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) {
    throw new PriceTableError('must be a JSON object of model → {input, cachedInput, output}');
  }
  const table: Record<string, ModelPrice> = {};
  for (const [model, price] of Object.entries(raw as Record<string, unknown>)) {
    if (model.trim() === '' || model === '__proto__') {
      throw new PriceTableError(`has a model name that is empty or not allowed ("${model}")`);
    }
    if (typeof price !== 'object' || price === null || Array.isArray(price)) {
      throw new PriceTableError(`"${model}" must be an object {input, cachedInput, output}`);
    }
    const fields = price as Record<string, unknown>;
    for (const key of Object.keys(fields)) {
      if (!(PRICE_FIELDS as readonly string[]).includes(key)) {
        throw new PriceTableError(
          `"${model}".${key} is not a price; use input, cachedInput, output`,
        );
      }
    }
    const checked = {} as Record<(typeof PRICE_FIELDS)[number], number>;
    for (const key of PRICE_FIELDS) {
      const value = fields[key];
      if (typeof value !== 'number' || !Number.isFinite(value) || value < 0 || value > 10_000) {
        throw new PriceTableError(
          `"${model}".${key} must be a number of USD per million tokens between 0 and 10000`,
        );
      }
      checked[key] = value;
    }
    table[model] = checked;
  }
  return table;
}

/**
 * The price of `model`: its own entry, or the entry it is a dated or routed name of
 * ("gpt-4o-mini-2024-07-18", "openai/gpt-4o-mini"): the longest table name it starts with
 * before a "-", after any "provider/" prefix. null: the table does not know it.
 */
export function priceOf(table: ModelPriceTable, model: string): ModelPrice | null {
  const own = Object.prototype.hasOwnProperty.call(table, model) ? table[model] : undefined;
  if (own) return own;
  const name = model.includes('/') ? model.slice(model.lastIndexOf('/') + 1) : model;
  if (Object.prototype.hasOwnProperty.call(table, name)) return table[name];
  let best: string | null = null;
  for (const known of Object.keys(table)) {
    if (name.startsWith(`${known}-`) && (best === null || known.length > best.length)) best = known;
  }
  return best === null ? null : table[best];
}

/** USD for one call's (or a sum of calls') tokens at `price`. */
export function costOf(
  price: ModelPrice,
  usage: { promptTokens: number; completionTokens: number; cachedTokens: number },
): number {
  const cached = Math.min(usage.cachedTokens, usage.promptTokens);
  return (
    ((usage.promptTokens - cached) * price.input +
      cached * price.cachedInput +
      usage.completionTokens * price.output) /
    1_000_000
  );
}
