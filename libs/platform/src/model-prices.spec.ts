import { ConfigError, loadConfig, modelPriceTable } from './config';
import { DEFAULT_MODEL_PRICES, costOf, priceOf } from './model-prices';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

describe('the price table', () => {
  it('prices a model by its own name, a dated name or a routed name', () => {
    const mini = DEFAULT_MODEL_PRICES['gpt-4o-mini'];
    expect(priceOf(DEFAULT_MODEL_PRICES, 'gpt-4o-mini')).toBe(mini);
    expect(priceOf(DEFAULT_MODEL_PRICES, 'gpt-4o-mini-2024-07-18')).toBe(mini);
    expect(priceOf(DEFAULT_MODEL_PRICES, 'openai/gpt-4o-mini')).toBe(mini);
    // the longest known name wins: gpt-4o-mini is not priced as gpt-4o
    expect(priceOf(DEFAULT_MODEL_PRICES, 'gpt-4o-2024-08-06')).toBe(DEFAULT_MODEL_PRICES['gpt-4o']);
    expect(priceOf(DEFAULT_MODEL_PRICES, 'llama3.1')).toBeNull();
    expect(priceOf(DEFAULT_MODEL_PRICES, 'constructor')).toBeNull();
  });

  it('costs uncached input, cached input and output at their own prices', () => {
    const price = { input: 2, cachedInput: 0.5, output: 8 };
    expect(
      costOf(price, { promptTokens: 1_000_000, cachedTokens: 600_000, completionTokens: 0 }),
    ).toBe(0.8 + 0.3);
    expect(costOf(price, { promptTokens: 0, cachedTokens: 0, completionTokens: 500_000 })).toBe(4);
  });

  it('is overridden by MODEL_PRICES_FILE, then by MODEL_PRICES', () => {
    const dir = mkdtempSync(join(tmpdir(), 'prices-'));
    const file = join(dir, 'prices.json');
    writeFileSync(
      file,
      JSON.stringify({
        'gpt-4o-mini': { input: 1, cachedInput: 1, output: 1 },
        'local-model': { input: 0, cachedInput: 0, output: 0 },
      }),
    );
    const config = loadConfig({
      MODEL_PRICES_FILE: file,
      MODEL_PRICES: '{"local-model": {"input": 0.5, "cachedInput": 0.1, "output": 1}}',
    });
    const table = modelPriceTable(config);
    expect(table['gpt-4o-mini']).toEqual({ input: 1, cachedInput: 1, output: 1 });
    expect(table['local-model']).toEqual({ input: 0.5, cachedInput: 0.1, output: 1 });
    expect(table['gpt-4o']).toEqual(DEFAULT_MODEL_PRICES['gpt-4o']);
  });

  it.each([
    ['not json', /MODEL_PRICES must be a JSON object/],
    ['[1]', /MODEL_PRICES must be a JSON object/],
    ['{"m": 3}', /MODEL_PRICES "m" must be an object/],
    ['{"m": {"input": 1, "cachedInput": 1}}', /MODEL_PRICES "m"\.output must be a number/],
    ['{"m": {"input": -1, "cachedInput": 1, "output": 1}}', /"m"\.input must be a number/],
    [
      '{"m": {"input": 1, "cachedInput": 1, "output": 1, "cached": 1}}',
      /"m"\.cached is not a price/,
    ],
  ])('refuses MODEL_PRICES=%s at start-up, naming what to fix', (value, message) => {
    expect(() => loadConfig({ MODEL_PRICES: value })).toThrow(ConfigError);
    expect(() => loadConfig({ MODEL_PRICES: value })).toThrow(message);
  });

  it('refuses a MODEL_PRICES_FILE that cannot be read', () => {
    expect(() => loadConfig({ MODEL_PRICES_FILE: '/nonexistent/prices.json' })).toThrow(
      /MODEL_PRICES_FILE names a file that cannot be read/,
    );
  });
});
