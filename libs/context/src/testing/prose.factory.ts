// Deterministic, varied story prose for tests and the benchmark. One repeated sentence would
// tokenize unrealistically well (and make token sums look better than they are), so sentences
// are composed from several templates and word pools, with dialogue, numbers, punctuation and
// the occasional non-ASCII character that real stories contain.

/** mulberry32: a small seeded PRNG, so every run produces the same story. */
export function seededRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const NAMES = [
  'Mira',
  'Captain Voss',
  'old Tobias',
  'Sister Anwen',
  'the ferryman',
  'Lady Okonkwo',
  'Renée',
  'Hakon',
  'the innkeeper',
  'Jun-seo',
  'Brother Ezio',
  'the smuggler Dace',
  'Aleksandr',
  'a hooded child',
  'the cartographer',
  'Ysolde',
];
const PLACES = [
  'the lighthouse',
  'the drowned chapel',
  'Saltmarch harbour',
  'the north road',
  'the market',
  'the archive',
  'the cellar beneath the inn',
  'the ridge above Kestrel Fen',
  'the ferry landing',
  'the abandoned mill',
  'the lantern district',
  'the old watchtower',
  'the café on Rue Morne',
  'the frozen quarry',
  'the reed beds',
  'the customs house',
];
const OBJECTS = [
  'a brass key',
  'the sealed letter',
  'a lantern',
  'the map',
  'a rusted cutlass',
  'the ledger',
  'a silver compass',
  'the wax seal',
  'a bundle of herbs',
  'the iron box',
  'a torn banner',
  'the glass vial',
  'a coil of rope',
  'the dragon-bone dice',
  'a loaf of black bread',
];
const ADJECTIVES = [
  'grey',
  'restless',
  'salt-stained',
  'quiet',
  'crooked',
  'bright',
  'cold',
  'half-remembered',
  'narrow',
  'sodden',
  'flickering',
  'ancient',
  'wary',
  'unhurried',
  'brittle',
  'enormous',
];
const VERBS = [
  'studies',
  'pockets',
  'turns over',
  'sets down',
  'examines',
  'hides',
  'offers',
  'weighs',
  'unwraps',
  'polishes',
  'drops',
  'clutches',
];
const WEATHER = [
  'Rain needles across the roofs.',
  'Fog rolls in off the water, thick as wool.',
  'The wind drops, and for a moment everything is still.',
  'Thunder mutters somewhere inland.',
  'A pale sun breaks through the clouds.',
  'Snow begins to fall, slow and deliberate.',
  'Gulls wheel and scream over the harbour.',
  'The tide sucks at the pilings below.',
];
const SPEECH = [
  'We leave at first light, or not at all.',
  'You are not the first to ask about that.',
  'Keep your voice down — the walls here listen.',
  'How much is it worth to you?',
  'I saw it with my own eyes, I swear it.',
  'Nobody goes up there after dark. Nobody sane.',
  'Forty crowns, and not a copper less.',
  'Ha! You think the tide cares what you want?',
  'Tell me the truth this time.',
  'It was already broken when I found it.',
];
const PLAYER_VERBS = [
  'look around',
  'ask about the missing ship',
  'draw my sword',
  'open the door slowly',
  'follow the tracks',
  'light the lantern',
  'search the desk',
  'offer a coin',
  'climb the stairs',
  'listen at the wall',
  'read the letter aloud',
  'wait in the shadows',
];
const EMOJI = ['🐉', '🌊', '⚓', '🕯️'];

export interface ProseGenerator {
  sentence(): string;
  /** An AI narration: one to three paragraphs. */
  narration(): string;
  /** A player's input, as a do, say or story action. */
  playerAction(): { type: 'do' | 'say' | 'story'; text: string };
}

export function proseGenerator(seed: number): ProseGenerator {
  const random = seededRandom(seed);
  const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)];
  const int = (min: number, max: number) => min + Math.floor(random() * (max - min + 1));
  const cap = (text: string) => text.charAt(0).toUpperCase() + text.slice(1);

  const templates: (() => string)[] = [
    () => `${cap(pick(NAMES))} ${pick(VERBS)} ${pick(OBJECTS)} and says nothing.`,
    () => `"${pick(SPEECH)}" ${pick(NAMES)} says, eyes on ${pick(OBJECTS)}.`,
    () => `You reach ${pick(PLACES)} as the ${pick(ADJECTIVES)} light fades.`,
    () => pick(WEATHER),
    () =>
      `The ${pick(ADJECTIVES)} path to ${pick(PLACES)} is ${int(2, 19)} miles of mud and stone.`,
    () => `Somewhere behind you, ${pick(NAMES)} laughs — a ${pick(ADJECTIVES)}, ugly sound.`,
    () =>
      `${cap(pick(OBJECTS))} feels ${pick(ADJECTIVES)} in your hand; it is older than it looks.`,
    () => `"${pick(SPEECH)}"`,
    () =>
      `In ${pick(PLACES)}, ${pick(NAMES)} waits with ${pick(OBJECTS)}, counting ${int(3, 300)} coins twice.`,
    () => `You remember ${pick(PLACES)}, and the ${pick(ADJECTIVES)} night you left it.`,
    () => `${cap(pick(NAMES))} glances at you, then at ${pick(NAMES)}, and shrugs.`,
    () =>
      `A sign above the door reads "${pick(ADJECTIVES).toUpperCase()} ${pick(['ROSE', 'ANCHOR', 'CROWN', 'EEL'])}."${random() < 0.08 ? ` ${pick(EMOJI)}` : ''}`,
  ];

  const sentence = () => pick(templates)();
  const paragraph = () => Array.from({ length: int(2, 6) }, sentence).join(' ');
  return {
    sentence,
    narration: () => Array.from({ length: int(1, 3) }, paragraph).join('\n\n'),
    playerAction: () => {
      const roll = random();
      if (roll < 0.6) return { type: 'do', text: `You ${pick(PLAYER_VERBS)}.` };
      if (roll < 0.9) return { type: 'say', text: `You say "${pick(SPEECH)}"` };
      return { type: 'story', text: sentence() };
    },
  };
}
