import { InvalidCommandError } from './adventure.errors';
import { fillPlaceholders, formatPlayerInput, placeholderNames } from './player-input.format';

describe('formatPlayerInput', () => {
  it.each([
    ['walk north', '> You walk north.'],
    ['Walk north', '> You walk north.'],
    ['you walk north', '> You walk north.'],
    ['You open the door!', '> You open the door!'],
    ['  YOU   wait…  ', '> You wait…'],
    ['I shout for help?', '> You shout for help?'],
    ['NASA calls', '> You NASA calls.'],
    ['youthfully skip', '> You youthfully skip.'],
  ])('do %j → %j', (text, expected) => {
    expect(formatPlayerInput('do', text)).toBe(expected);
  });

  it.each([
    ['hello there', '> You say "hello there."'],
    ['"hello there"', '> You say "hello there."'],
    ['“Who goes there?”', '> You say "Who goes there?"'],
    ['Run!', '> You say "Run!"'],
    ['  "wait…"  ', '> You say "wait…"'],
  ])('say %j → %j', (text, expected) => {
    expect(formatPlayerInput('say', text)).toBe(expected);
  });

  it('keeps story text raw and writes nothing for continue', () => {
    expect(formatPlayerInput('story', 'The storm breaks  ')).toBe('The storm breaks  ');
    expect(formatPlayerInput('continue', 'ignored')).toBeNull();
  });

  it.each(['do', 'say', 'story'] as const)(
    'refuses empty %s text with what to do instead',
    (type) => {
      expect(() => formatPlayerInput(type, '   ')).toThrow(InvalidCommandError);
      expect(() => formatPlayerInput(type, '')).toThrow(/continue/);
    },
  );

  it('refuses a do that is only "you"', () => {
    expect(() => formatPlayerInput('do', 'you ')).toThrow(InvalidCommandError);
  });
});

describe('fillPlaceholders', () => {
  it('answers every ${Name}, repeated ones included', () => {
    expect(
      fillPlaceholders('${Name} of ${Town}. ${Name} waits.', { Name: 'Ash', Town: 'Brill' }),
    ).toBe('Ash of Brill. Ash waits.');
  });

  it('names every missing answer', () => {
    expect(() => fillPlaceholders('${Name} of ${Town} and ${Ship}', { Name: 'Ash' })).toThrow(
      /"Town", "Ship"/,
    );
  });

  it('lists the placeholders in order of first appearance', () => {
    expect(placeholderNames('${B} ${A} ${B}')).toEqual(['B', 'A']);
  });
});
