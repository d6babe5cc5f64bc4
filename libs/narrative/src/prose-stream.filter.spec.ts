import { ProseStreamFilter } from './prose-stream.filter';

function run(pieces: string[]): { shown: string[]; rest: string } {
  const filter = new ProseStreamFilter();
  const shown = pieces.map((piece) => filter.push(piece));
  return { shown, rest: filter.flush() };
}

describe('ProseStreamFilter', () => {
  it('passes prose through piece by piece', () => {
    expect(run(['You walk ', 'into the ', 'hall.'])).toEqual({
      shown: ['You walk ', 'into the ', 'hall.'],
      rest: '',
    });
  });

  it('stops at a state fence, even one split across pieces', () => {
    const { shown, rest } = run(['The door opens.\n\n`', '``state\n{"type":"fact"}', '\n```']);
    expect(shown.join('')).toBe('The door opens.\n\n');
    expect(rest).toBe('');
  });

  it('releases backticks held back when no fence follows', () => {
    const { shown, rest } = run(['a `code`', '` b']);
    expect(shown.join('') + rest).toBe('a `code`` b');
    expect(run(['ends with `']).rest).toBe('`');
  });
});
