import { buildContext, type BuiltContext, type ContextHead, type WindowAction } from './index';
import { renderPlayers } from './persona.render';
import { aCard, aContextHead, anAction } from './testing';

// docs/multiplayer.md §3.2: in a room the prompt's player section lists every active player's
// character and tells the narrator to act and speak for none of them; one player keeps today's
// persona section (the golden prompts prove its bytes).
const mira = { name: 'Mira', pronouns: 'she/her', description: 'A stubborn ringer.' };
const bo = { name: 'Bo', pronouns: 'he/him', description: '' };
const tal = { name: 'Tal', pronouns: '', description: 'A ferryman.' };

function aHead(overrides: Parameters<typeof aContextHead>[0] = {}): ContextHead {
  return aContextHead({
    persona: { name: 'Mira', pronouns: 'she/her', description: 'A stubborn ringer.' },
    plotEssentials: 'The bell is cracked.',
    storyCards: [aCard('c1', 'bell', 'The bell rang for the drowned.')],
    ...overrides,
  });
}

const window: WindowAction[] = [
  anAction('1', 'The tower sways.', 'start'),
  anAction('2', '> Mira climbs the stairs.', 'do'),
  anAction('3', '> Bo says, "Wait for me."', 'say'),
];

function build(head: ContextHead): BuiltContext {
  return buildContext({ ...head, window });
}

const labels = (built: BuiltContext) => built.report.sections.map((s) => s.label);
const sectionText = (built: BuiltContext, label: string) =>
  built.report.sections.find((s) => s.label === label)?.text;

describe('the player section of a room', () => {
  it('when a room has two players, then their characters replace the persona, each with pronouns and description, and the narrator plays neither', () => {
    // Given a room where Mira and Bo play
    const head = aHead({ players: [mira, bo] });
    // When its context is built
    const built = build(head);
    // Then the player section lists both, in the persona's place, with the rule
    expect(labels(built).slice(0, 4)).toEqual([
      'narrator',
      'state_rule',
      'players',
      'plot_essentials',
    ]);
    expect(sectionText(built, 'players')).toBe(
      [
        'Player characters (each played by a different person):',
        '- Mira (she/her): A stubborn ringer.',
        '- Bo (he/him)',
        'A player\'s action names their character ("> Mira draws a sword.", "> Mira says, \\"…\\"").' +
          " Narrate what happens in answer. Never act, speak or decide for Mira and Bo: what they do and say is their players' to write.",
      ].join('\n'),
    );
    expect(built.system).toContain(sectionText(built, 'players'));
    expect(built.system).not.toContain('Player character:\nYou are Mira');
  });

  it('when three play, then the rule names them all', () => {
    expect(renderPlayers([mira, bo, tal])).toContain(
      'Never act, speak or decide for Mira, Bo and Tal:',
    );
    expect(renderPlayers([mira, bo, tal])).toContain('\n- Tal: A ferryman.\n');
  });

  it('when a character has no name, then it is left out, and with none named the section is empty', () => {
    const unnamed = { name: '  ', pronouns: 'she/her', description: 'Someone.' };
    expect(renderPlayers([unnamed, bo])).not.toContain('Someone');
    expect(renderPlayers([unnamed])).toBe('');
    expect(renderPlayers([])).toBe('');
  });

  it.each([
    ['null', null],
    ['empty', []],
  ])(
    'when the players are %s (one player), then the prompt is byte-identical to one without them',
    (_name, players) => {
      // Given the same one-player adventure with and without the room's field
      const without = build(aHead());
      const withField = build(aHead({ players }));
      // Then the system block and the story are the same bytes, the persona section in place
      expect(withField.system).toBe(without.system);
      expect(withField.story).toBe(without.story);
      expect(labels(withField)).toContain('persona');
      expect(labels(withField)).not.toContain('players');
    },
  );

  it('when the room goes on, then the player section stays in the cached system block', () => {
    // Given the room's head on two turns with a longer story on the second
    const first = build(aHead({ players: [mira, bo] }));
    const second = buildContext({
      ...aHead({ players: [mira, bo] }),
      window: [...window, anAction('4', 'The bell tolls.', 'ai')],
    });
    // Then the system block is unchanged
    expect(second.system).toBe(first.system);
  });
});
