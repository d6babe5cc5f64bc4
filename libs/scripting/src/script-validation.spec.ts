import { sourceSizeProblems, syntaxProblem } from './script-validation';

describe('script validation', () => {
  it('given a Library of 4 MiB + 1 byte, then a size problem; 4 MiB passes (S11)', () => {
    expect(sourceSizeProblems({ library: 'a'.repeat(4 * 1024 * 1024) })).toEqual([]);
    expect(sourceSizeProblems({ library: 'a'.repeat(4 * 1024 * 1024 + 1) })).toEqual([
      { field: 'library', message: 'library is 4194305 bytes; the limit is 4194304' },
    ]);
  });

  it('counts UTF-8 bytes, not characters', () => {
    expect(sourceSizeProblems({ input: 'é'.repeat(128 * 1024 + 1) })).toHaveLength(1);
  });

  it('splits an engine message into message, line and column', () => {
    expect(syntaxProblem('input', "Unexpected token ';' [input.js:3:9]")).toEqual({
      field: 'input',
      message: "Unexpected token ';'",
      line: 3,
      column: 9,
    });
    expect(syntaxProblem('input', 'odd')).toEqual({ field: 'input', message: 'odd' });
  });
});
