import { Tiktoken } from 'js-tiktoken/lite';
import cl100kBase from 'js-tiktoken/ranks/cl100k_base';
import o200kBase from 'js-tiktoken/ranks/o200k_base';
import { tokenizer, type TokenEncoding } from './tokenizer';

/** Texts of every kind a count meets, from a fixed seed: words, runs of spaces, scripts, marks. */
function texts(count: number): string[] {
  const parts = [
    'The',
    ' lamp',
    ' burns',
    "'s",
    "'ll",
    ' ',
    '  ',
    '   ',
    '\n',
    '\n\n',
    ' \n ',
    '\t',
    '1234567',
    ' 42',
    '...',
    '!?',
    ' — ',
    'é',
    'naïve',
    ' 中文',
    '文章です。',
    ' 🙂',
    '👩‍👩‍👧',
    '<|endoftext|>',
    ' ```',
    '> You',
    " don't",
    'HTTP/1.1',
    '  \n  x',
    'tab\there',
    ' a',
    'a',
    '\u2028',
  ];
  let seed = 7;
  const next = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
  return Array.from({ length: count }, () =>
    Array.from(
      { length: 1 + Math.floor(next() * 40) },
      () => parts[Math.floor(next() * parts.length)],
    ).join(''),
  );
}

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

  it.each<[TokenEncoding, Tiktoken]>([
    ['cl100k_base', new Tiktoken(cl100kBase)],
    ['o200k_base', new Tiktoken(o200kBase)],
  ])(
    'counts %s piece by piece exactly as a whole encode does, memo cold and warm',
    (encoding, whole) => {
      const tok = tokenizer(encoding);
      for (const text of texts(400)) {
        const expected = whole.encode(text, [], []).length;
        expect([text, tok.count(text)]).toEqual([text, expected]);
        expect([text, tok.count(text)]).toEqual([text, expected]);
      }
    },
  );

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
