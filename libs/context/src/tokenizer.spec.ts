import { tokenizer } from './tokenizer';

describe('tokenizer', () => {
  it('is built once per encoding and process', () => {
    expect(tokenizer('cl100k_base')).toBe(tokenizer('cl100k_base'));
    expect(tokenizer()).toBe(tokenizer('cl100k_base'));
    expect(tokenizer('o200k_base')).not.toBe(tokenizer('cl100k_base'));
  });

  it('counts with the bundled ranks of each encoding', () => {
    expect(tokenizer('cl100k_base').count('hello world')).toBe(2);
    expect(tokenizer('cl100k_base').count('')).toBe(0);
    // A script cl100k_base splits finely and o200k_base does not.
    const text = 'これは日本語の文章です。';
    expect(tokenizer('o200k_base').count(text)).toBeLessThan(tokenizer('cl100k_base').count(text));
  });

  it('counts the same with and without the memo', () => {
    const tok = tokenizer('cl100k_base');
    const text = 'The lamp burns whale oil, and it needs tending every four hours.';
    expect(tok.countCached(text)).toBe(tok.count(text));
    expect(tok.countCached(text)).toBe(tok.count(text));
  });

  it('counts a special token typed as text as ordinary text instead of throwing', () => {
    expect(tokenizer('cl100k_base').count('a <|endoftext|> b')).toBeGreaterThan(3);
  });

  it('returns the last n tokens of a text, or all of it', () => {
    const tok = tokenizer('cl100k_base');
    expect(tok.lastTokens('one two three four', 2)).toBe(' three four');
    expect(tok.lastTokens('one two', 5)).toBe('one two');
    expect(tok.lastTokens('one two', 0)).toBe('');
  });
});
