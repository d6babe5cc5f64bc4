import { sendsPromptCacheKey } from './model-client.types';

describe('prompt_cache_key', () => {
  it('goes to OpenAI by default, nowhere else, unless the setting says so', () => {
    expect(sendsPromptCacheKey('auto', 'https://api.openai.com/v1')).toBe(true);
    expect(sendsPromptCacheKey(undefined, 'https://api.openai.com/v1')).toBe(true);
    expect(sendsPromptCacheKey('auto', 'https://openrouter.ai/api/v1')).toBe(false);
    expect(sendsPromptCacheKey('auto', 'https://api.openai.com.evil.example/v1')).toBe(false);
    expect(sendsPromptCacheKey('auto', 'not a url')).toBe(false);
    expect(sendsPromptCacheKey('true', 'http://localhost:11434/v1')).toBe(true);
    expect(sendsPromptCacheKey('false', 'https://api.openai.com/v1')).toBe(false);
  });
});
