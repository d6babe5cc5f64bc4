import { InvalidCommandError } from './adventure.errors';
import { formatPlayerInput } from './player-input.format';
import { type ActingCharacter, pronounsOf, toThirdPerson } from './player-input.third-person';
import { thirdPersonSingular } from './player-input.verbs';

// docs/multiplayer.md §3.2: in a room an action is written about its character by name, AI
// Dungeon style: `Do` "I draw my sword" by Mira → `> Mira draws her sword.`; `Say` →
// `> Mira says, "…"`; first-person words outside quotes become the character's by pronouns.
const mira: ActingCharacter = { name: 'Mira', pronouns: 'she/her' };
const bo: ActingCharacter = { name: 'Bo', pronouns: 'he/him' };
const tal: ActingCharacter = { name: 'Tal', pronouns: 'they/them' };
const nameless: ActingCharacter = { name: 'Ren', pronouns: '' };
const zed: ActingCharacter = { name: 'Zed', pronouns: 'xe/xem/xyr/xyrs/xemself' };

describe('a do-action in the third person', () => {
  describe('given Mira (she/her) in a room', () => {
    it.each([
      ['I draw my sword', '> Mira draws her sword.'],
      ['draw my sword', '> Mira draws her sword.'],
      ['Draw my sword!', '> Mira draws her sword!'],
      ['you walk north', '> Mira walks north.'],
      ['I am tired. I was never this tired', '> Mira is tired. Mira was never this tired.'],
      ['I have a key', '> Mira has a key.'],
      ['I go north', '> Mira goes north.'],
      ['I try the door', '> Mira tries the door.'],
      ['I fix the lock', '> Mira fixes the lock.'],
      ['I pass the salt', '> Mira passes the salt.'],
      ['I play the lute', '> Mira plays the lute.'],
      ['I fly away', '> Mira flies away.'],
      ['I swing', '> Mira swings.'],
      ['I need rest', '> Mira needs rest.'],
      ["I don't know", "> Mira doesn't know."],
      ['I can see it', '> Mira can see it.'],
      ['I would never', '> Mira would never.'],
      ['I drew my sword', '> Mira drew her sword.'],
      ['I walked home', '> Mira walked home.'],
      ['I never go there', '> Mira never goes there.'],
      ['I quickly draw my sword', '> Mira quickly draws her sword.'],
      ["I'm lost, so I check my map", '> Mira is lost, so she checks her map.'],
      ["I've been here", '> Mira has been here.'],
      ['I’ll wait', '> Mira will wait.'],
      ["I'd rather not", "> Mira'd rather not."],
      ['I draw my sword and I swing', '> Mira draws her sword and she swings.'],
      ['I draw my sword, then charge', '> Mira draws her sword, then charges.'],
      ['I draw my sword. I charge', '> Mira draws her sword. Mira charges.'],
      ['hand her the key. It is mine', '> Mira hands her the key. It is hers.'],
      ['pinch myself', '> Mira pinches herself.'],
      ['call for Tom to follow me', '> Mira calls for Tom to follow her.'],
      ['My heart hurts', "> Mira's heart hurts."],
      ['Me and Tom run', '> Mira and Tom run.'],
      ['Tom and I run', '> Tom and Mira run.'],
      ['i wave', '> Mira waves.'],
      ['climb down into the mine', '> Mira climbs down into the mine.'],
      ['I mine the ore', '> Mira mines the ore.'],
      ['into the inn', '> Mira into the inn.'],
      ['NASA calls', '> Mira NASA calls.'],
    ])('when Mira does %j, then the story reads %j', (typed, written) => {
      expect(formatPlayerInput('do', typed, mira)).toBe(written);
    });
  });

  describe('given words inside quotes', () => {
    it.each([
      [
        '"She will not get away with this!" I raise my sword.',
        '> "She will not get away with this!" Mira raises her sword.',
      ],
      [
        'My heart hurts. "I can\'t believe this."',
        '> Mira\'s heart hurts. "I can\'t believe this."',
      ],
      ['say “I know my rights” and I leave', '> Mira says “I know my rights” and she leaves.'],
      ['whisper "my love', '> Mira whispers "my love.'],
      ['"Halt!"', '> Mira says, "Halt!"'],
      ['“Who goes there?”', '> Mira says, “Who goes there?”'],
    ])('when Mira does %j, then the quote is as she typed it: %j', (typed, written) => {
      expect(formatPlayerInput('do', typed, mira)).toBe(written);
    });
  });

  describe('given the pronouns of the character', () => {
    it.each([
      [
        bo,
        'I draw my sword and I swing at myself',
        '> Bo draws his sword and he swings at himself.',
      ],
      [bo, 'hand him the key. It is mine', '> Bo hands him the key. It is his.'],
      [tal, "I'm lost, so I check my map", '> Tal is lost, so they check their map.'],
      [tal, 'I draw and I am ready', '> Tal draws and they are ready.'],
      [tal, 'I look. I was there and I was sure', '> Tal looks. Tal was there and they were sure.'],
      [tal, "I wait and I'm sure", "> Tal waits and they're sure."],
      [tal, 'hand her the key. It is mine', '> Tal hands her the key. It is theirs.'],
      [tal, 'pinch myself', '> Tal pinches themselves.'],
      [nameless, 'I wait and I go', '> Ren waits and they go.'],
      [zed, 'I look at myself and my face', '> Zed looks at xemself and xyr face.'],
      [mira, "I draw and I've got it", "> Mira draws and she's got it."],
    ])('when %j does %j, then the story reads %j', (actor, typed, written) => {
      expect(formatPlayerInput('do', typed, actor)).toBe(written);
    });
  });

  it('reads pronoun sets by their first word, and missing parts by the name', () => {
    expect(pronounsOf({ name: 'Mira', pronouns: 'She/Her' }).determiner).toBe('her');
    expect(pronounsOf({ name: 'Mira', pronouns: 'she/they' }).subject).toBe('she');
    expect(pronounsOf({ name: 'Ash', pronouns: 'ze/zir' })).toEqual({
      subject: 'ze',
      object: 'zir',
      determiner: "Ash's",
      possessive: "Ash's",
      reflexive: 'zirself',
      plural: false,
    });
  });

  it('leaves text without first-person words as it is', () => {
    expect(toThirdPerson('The gate creaks open.', mira)).toBe('The gate creaks open.');
  });

  it('refuses a do that is only "you", as for one player', () => {
    expect(() => formatPlayerInput('do', 'you ', mira)).toThrow(InvalidCommandError);
  });
});

describe('say and story in a room', () => {
  it.each([
    ['hello there', '> Mira says, "hello there."'],
    ['"hello there"', '> Mira says, "hello there."'],
    ['“Who goes there?”', '> Mira says, "Who goes there?"'],
    ['I know my rights', '> Mira says, "I know my rights."'],
  ])('when Mira says %j, then the story reads %j', (typed, written) => {
    expect(formatPlayerInput('say', typed, mira)).toBe(written);
  });

  it('keeps story text raw and writes nothing for continue', () => {
    expect(formatPlayerInput('story', 'I write  ', mira)).toBe('I write  ');
    expect(formatPlayerInput('continue', 'ignored', mira)).toBeNull();
  });

  it('writes for one player as before when no character acts', () => {
    expect(formatPlayerInput('do', 'I draw my sword', null)).toBe('> You draw your sword.');
    expect(formatPlayerInput('say', 'hi', undefined)).toBe('> You say "hi."');
  });
});

describe('the verb after the subject', () => {
  it.each([
    ['draw', 'draws'],
    ['go', 'goes'],
    ['do', 'does'],
    ['try', 'tries'],
    ['play', 'plays'],
    ['watch', 'watches'],
    ['wash', 'washes'],
    ['have', 'has'],
    ['am', 'is'],
    ["don't", "doesn't"],
    ['haven’t', 'hasn’t'],
    ['can', 'can'],
    ["can't", "can't"],
    ['went', 'went'],
    ['jumped', 'jumped'],
    ['runs', 'runs'],
    ['the', 'the'],
    ['NASA', 'NASA'],
  ])('when the player wrote "I %s", then the character %s', (verb, agreed) => {
    expect(thirdPersonSingular(verb)).toBe(agreed);
  });
});

/** A seeded generator, so a failing case is the same on every run. */
function random(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state * 1664525 + 1013904223) >>> 0;
    return state / 2 ** 32;
  };
}

const WORDS = [
  'I',
  'i',
  'me',
  'my',
  'mine',
  'myself',
  "I'm",
  'I’ve',
  "I'll",
  'am I',
  'draw',
  'go',
  'try',
  'the',
  'sword',
  'and',
  'then',
  'quickly',
  'never',
  'Tom',
  ',',
  '.',
  '!',
  'can',
  'went',
];
const QUOTED = [
  'I',
  'my',
  'me',
  'myself',
  "I'm",
  'am',
  'run',
  'and',
  'then',
  'go',
  'Tom',
  '!',
  '?',
];

function pick<T>(next: () => number, items: readonly T[]): T {
  return items[Math.floor(next() * items.length)];
}

function words(next: () => number, from: readonly string[], most: number): string {
  const count = 1 + Math.floor(next() * most);
  return Array.from({ length: count }, () => pick(next, from)).join(' ');
}

describe('given any do-action with quotes (a property over 2,000 seeded inputs)', () => {
  it('when it is written about a character, then every quotation is kept as typed and no first-person word is left outside quotes', () => {
    const next = random(28);
    for (let run = 0; run < 2000; run++) {
      const quotes: string[] = [];
      const parts: string[] = [];
      for (let part = 0; part < 1 + Math.floor(next() * 4); part++) {
        if (next() < 0.4) {
          const [open, close] = pick(next, [
            ['"', '"'],
            ['“', '”'],
          ] as const);
          const quote = `${open}${words(next, QUOTED, 6)}${close}`;
          quotes.push(quote);
          parts.push(quote);
        } else {
          parts.push(words(next, WORDS, 8));
        }
      }
      const typed = parts.join(' ');
      if (typed.replace(/^you\s+/i, '').trim() === '') continue;
      const actor = pick(next, [mira, bo, tal, nameless, zed]);
      const written = formatPlayerInput('do', typed, actor) ?? '';
      for (const quote of quotes) expect(written).toContain(quote);
      const outside = written.replace(/["“][^"”]*["”]/g, ' ');
      expect({ typed, outside }).toEqual({
        typed,
        outside: expect.not.stringMatching(/\b(?:I|me|my|myself)\b|\bI['’]/i),
      });
    }
  });
});
