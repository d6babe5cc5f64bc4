import { backtrackingRisk, isRegexShaped, regexKey, splitKeys } from './lore.keys';

describe('lore keys', () => {
  it('splits per syntax', () => {
    expect(splitKeys(' a , b ,,')).toEqual(['a', 'b']);
    expect(splitKeys(' a , b ,,', 'aid')).toEqual([' a ', ' b ']);
    expect(splitKeys(' a,1 \n b ', 'lines')).toEqual(['a,1', 'b']);
  });

  it('knows a regex by its /…/flags shape only', () => {
    expect(isRegexShaped('/cap(tain)?/i')).toBe(true);
    expect(isRegexShaped('/usr/bin/')).toBe(false);
    expect(isRegexShaped('Mr. Smith')).toBe(false);
    expect(isRegexShaped('/a\\/b/')).toBe(true);
  });

  it('refuses shapes that backtrack catastrophically, and keeps ordinary ones', () => {
    for (const pattern of [
      '(a+)+$',
      '(a|aa)*b',
      '(\\w+\\s?)*$',
      '(a)\\1',
      '.*x.*y',
      '((a+)b)+',
      '(?:a|b)+c',
    ]) {
      expect(backtrackingRisk(pattern)).not.toBeNull();
    }
    for (const pattern of [
      '\\bcapt(ain)?\\b',
      '(?:sword|blade)s?',
      'colou?r',
      '[a-z]+ing',
      'a{2,3}h',
      '(?<name>bob)',
      '(?=x)y',
    ]) {
      expect(backtrackingRisk(pattern)).toBeNull();
    }
  });

  it('compiles flags (global and sticky dropped) and reports a syntax error', () => {
    const ok = regexKey('/bob/gi');
    expect(ok.ok && ok.regex.flags).toBe('i');
    expect(regexKey('/(/')).toMatchObject({
      ok: false,
      problem: expect.stringMatching(/Invalid regular expression/),
    });
  });
});
