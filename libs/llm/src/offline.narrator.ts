// Kept whole past 400 lines (eslint's max-lines, which skips comments, counts fewer): the offline
// narrator is one small deterministic model (names, entities, the player's last action, verb
// agreement) that only this class uses; its helpers are exported for its specs, not for reuse.
import { ModelError } from './model.error';
import type {
  CompletionRequest,
  CompletionResult,
  ModelClient,
  ModelStreamEvent,
  ModelUsage,
  NarrationRequest,
} from './model-client.types';
import { chatMessages, completionPrompt } from './narration.prompt';
import { extractiveSummary } from './offline.extractive';

/** The model name every offline reply carries, so callers and logs can label it. */
export const OFFLINE_MODEL = 'offline-narrator';

const MEMORY_MAX_WORDS = 50;
const SUMMARY_MAX_WORDS = 250;
const CHAPTER_MAX_WORDS = 120;
const FACT_MAX_CHARS = 300;
const NAME_MAX_CHARS = 80;

// Capitalised words that start sentences or address the reader, never names.
const NOT_NAMES = new Set(
  (
    'A An The You Your Yours I It Its He She They Them Their His Her We Our This That These Those There Here ' +
    'When Where What Why How Who Which While With Without Then But And Or If As At In On Of For From To By ' +
    'After Before Now Once Still Some Every Each No Not Nothing Something Someone Story Player World Lore Memories ' +
    'Facts Characters Places Items Factions Other Plot Cast Setting Memory Continue Output State Example Events ' +
    'Author Note Use Ids Names Never Always Keep Write Report Omit Apply Part Fix Current New Updated'
  ).split(' '),
);

const PLACE_WORDS =
  /\b(mill|tower|harbou?r|lighthouse|castle|keep|inn|tavern|forest|wood|woods|city|town|village|temple|cave|cavern|road|bridge|gate|hall|market|square|port|island|mountain|river|lake|house|manor|chapel|library|ruins?|station|ship|valley|desert|street|camp)\b/i;
const ITEM_WORDS =
  /\b(key|sword|blade|dagger|ring|amulet|book|map|lantern|lamp|coin|letter|scroll|staff|bow|shield|crown|gem|stone|potion|box|chest|knife)\b/i;

const ATMOSPHERE = [
  'The air is still, as though the world is holding its breath.',
  'A cold wind moves through the place, carrying the smell of rain.',
  'Somewhere nearby, something shifts in the shadows and goes quiet again.',
  'Light falls at a slant, picking out details you had not noticed before.',
  'For a moment everything is quiet except for your own heartbeat.',
  'The ground creaks underfoot, old and patient.',
];

const CONSEQUENCE = [
  'It does not go quite as you expected, but it changes something.',
  'The moment settles, and a new possibility opens in front of you.',
  'Whatever happens next, there is no taking it back now.',
  'You sense that this choice will matter later.',
];

const WITNESS: Record<'character' | 'place' | 'item', readonly string[]> = {
  character: [
    '{name} is close by, watching to see what you will do next.',
    '{name} comes to mind, and you feel that your paths are bound to cross here.',
    'You catch sight of {name}, who seems to have been waiting for exactly this.',
    'The thought of {name} lingers as you take in your surroundings.',
  ],
  place: [
    '{name} lies ahead, closer now than it was.',
    'Your steps lead you toward {name}.',
    'You find yourself at {name}, and it is not as you remember it.',
  ],
  item: [
    'You think of {name} and what it might open.',
    '{name} is never far from your thoughts.',
    'Something about {name} feels important now.',
  ],
};

/** FNV-1a, 32 bit: the same prompt always picks the same words. */
function hash(text: string): number {
  let h = 0x811c9dc5 | 0;
  for (let i = 0; i < text.length; i += 1) {
    h ^= text.charCodeAt(i);
    // × the FNV prime (2^24 + 403) in shifts: Math.imul is slow inside jest's vm realm
    h = (h + (h << 1) + (h << 4) + (h << 7) + (h << 8) + (h << 24)) | 0;
  }
  return h >>> 0;
}

function pick<T>(items: readonly T[], seed: number, salt: number): T {
  return items[((seed ^ Math.imul(salt, 0x9e3779b1)) >>> 0) % items.length];
}

export function approxTokens(text: string): number {
  return text.length === 0 ? 0 : Math.ceil(text.length / 4);
}

function slugify(text: string): string {
  return text
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 64)
    .replace(/-+$/, '');
}

function words(text: string): string[] {
  return text.split(/\s+/).filter((w) => w.length > 0);
}

function limitWords(text: string, max: number): string {
  const list = words(text);
  if (list.length <= max) return list.join(' ');
  return `${list
    .slice(0, max)
    .join(' ')
    .replace(/[,;:.!?…]+$/, '')}.`;
}

function sentenceCase(text: string): string {
  return text.length > 0 ? text[0].toUpperCase() + text.slice(1) : text;
}

function endWithPeriod(text: string): string {
  return /[.!?…]["”']?$/.test(text) ? text : `${text}.`;
}

interface KnownEntity {
  id: string;
  name: string;
  kind: string;
  at?: string;
}

/** Reads the state section (`- id: Name (status, at place)` under a kind heading). */
export function knownEntities(prompt: string): Map<string, KnownEntity> {
  const known = new Map<string, KnownEntity>();
  const start = prompt.search(/^Story state\b.*:$/m);
  if (start < 0) return known;
  const section = prompt.slice(start).split(/\n\s*\n/)[0];
  let kind = 'other';
  for (const line of section.split('\n')) {
    const heading = /^(Characters|Places|Items|Factions|Other|Facts):$/.exec(line.trim());
    if (heading) {
      kind = {
        Characters: 'character',
        Places: 'place',
        Items: 'item',
        Factions: 'faction',
        Other: 'other',
        Facts: 'fact',
      }[heading[1] as 'Characters'];
      continue;
    }
    if (kind === 'fact') continue;
    const entry = /^- ([a-z0-9]+(?:[-_][a-z0-9]+)*): ([^(\n]+?)(?: \(([^)]*)\))?(?:\. .*)?$/.exec(
      line,
    );
    if (!entry) continue;
    const at = /(?:^|, )at ([a-z0-9]+(?:[-_][a-z0-9]+)*)/.exec(entry[3] ?? '');
    known.set(entry[1], { id: entry[1], name: entry[2].trim(), kind, ...(at && { at: at[1] }) });
  }
  return known;
}

/** Proper names in a text: runs of capitalised words that are not sentence furniture. */
export function properNames(text: string): string[] {
  const found: string[] = [];
  const pattern = /\b[A-Z][a-z'’]+(?:[ -](?:of |the )?[A-Z][a-z'’]+)*/g;
  for (const match of text.matchAll(pattern)) {
    const parts = match[0].split(' ');
    while (parts.length > 0 && NOT_NAMES.has(parts[0])) parts.shift();
    const name = parts.join(' ').trim();
    if (
      name.length >= 3 &&
      name.length <= NAME_MAX_CHARS &&
      !NOT_NAMES.has(name) &&
      !found.includes(name)
    )
      found.push(name);
  }
  return found;
}

interface PlayerAction {
  kind: 'do' | 'say' | 'none';
  /** second person, without the leading "You " */
  text: string;
}

export function lastPlayerAction(story: string): PlayerAction {
  const lines = [...story.matchAll(/^> (.+)$/gm)];
  const last = lines[lines.length - 1]?.[1]?.trim();
  if (!last) return { kind: 'none', text: '' };
  const said = /^You say "(.*)"$/s.exec(last);
  if (said) return { kind: 'say', text: said[1] };
  return { kind: 'do', text: last.replace(/^you\s+/i, '').replace(/[.!?…]+$/, '') };
}

function guessKind(name: string, context: string): 'character' | 'place' | 'item' {
  if (PLACE_WORDS.test(name)) return 'place';
  if (ITEM_WORDS.test(name)) return 'item';
  const around =
    new RegExp(`${name.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}[^.\\n]{0,60}`, 'i').exec(
      context,
    )?.[0] ?? '';
  if (/\b(is|was) an? (place|town|city|village|tower|inn|castle|forest|ruin)/i.test(around))
    return 'place';
  return 'character';
}

export interface OfflineReply {
  narration: string;
  block: string;
}

/**
 * Writes a deterministic reply for a narration prompt: a few sentences of
 * second-person prose around the player's last action and a name from the
 * story cards, then a `state` block built to pass the referee.
 */
export function offlineReply(system: string, story: string): OfflineReply {
  const seed = hash(`${system}\n\n${story}`);
  const action = lastPlayerAction(story);
  const known = knownEntities(story);
  const lore = [...story.matchAll(/^World Lore: (.+)$/gm)].map((m) => m[1]).join('\n');

  // a name the player just used wins over one from the cards, which wins over a known entity
  const fromAction = properNames(action.text).filter((n) => !/^You\b/.test(n));
  const fromLore = properNames(lore);
  const fromState = [...known.values()].filter((e) => e.id !== 'player').map((e) => e.name);
  const name: string | undefined =
    fromAction[0] ?? (fromLore.length > 0 ? pick(fromLore, seed, 7) : undefined) ?? fromState[0];

  const sentences: string[] = [];
  if (action.kind === 'do') sentences.push(endWithPeriod(`You ${action.text}`));
  else if (action.kind === 'say')
    sentences.push(`Your words, "${action.text}", hang in the air for a moment.`);
  else sentences.push('The story moves on.');
  sentences.push(pick(ATMOSPHERE, seed, 1));
  if (name) {
    const knownKind = [...known.values()].find(
      (e) => e.name.toLowerCase() === name.toLowerCase(),
    )?.kind;
    const kind =
      knownKind === 'place' || knownKind === 'item' || knownKind === 'character'
        ? knownKind
        : guessKind(name, lore);
    sentences.push(pick(WITNESS[kind], seed, 2).replace('{name}', name));
  }
  sentences.push(pick(CONSEQUENCE, seed, 3));
  const narration = sentences.join(' ');

  const events: Record<string, unknown>[] = [];
  const about: string[] = [];
  if (name) {
    const id = slugify(name);
    const existing =
      [...known.values()].find((e) => e.name.toLowerCase() === name.toLowerCase()) ?? known.get(id);
    const places = [...known.values()].filter((e) => e.kind === 'place');
    if (existing) {
      about.push(existing.id);
      // only a character or item can move, and only to a place it is not already at
      const target = places.find((p) => p.id !== existing.at && p.id !== existing.id);
      if ((existing.kind === 'character' || existing.kind === 'item') && target) {
        events.push({ type: 'move', id: existing.id, to: target.id });
      }
    } else if (id && id !== 'player') {
      const kind = guessKind(name, lore);
      const at = kind !== 'place' ? places[seed % Math.max(1, places.length)]?.id : undefined;
      events.push({
        type: 'enter',
        id,
        name: name.slice(0, NAME_MAX_CHARS),
        kind,
        ...(at && { at }),
      });
      if (kind === 'place') events.push({ type: 'move', id: 'player', to: id });
      about.push(id);
    }
  }
  const deed =
    action.kind === 'say'
      ? `The player said "${action.text}"`
      : action.kind === 'do'
        ? `The player chose to ${action.text}`
        : 'The story moved on';
  const mention = name && !deed.includes(name) ? ` with ${name} in mind` : '';
  const factText = `${deed}${mention}`.slice(0, FACT_MAX_CHARS - 1).trim();
  events.push({ type: 'fact', text: factText, ...(about.length > 0 && { about }) });

  const block = ['```state', ...events.map((e) => JSON.stringify(e)), '```'].join('\n');
  return { narration, block };
}

function protagonist(user: string): string {
  const cast = /^Cast:\s*\n(?:- )?([^\n(—]+?)\s*(?:\([^)]*\))?\s*—\s*the protagonist/m.exec(user);
  return cast?.[1]?.trim() || 'The player';
}

const IRREGULAR: Record<string, string> = {
  are: 'is',
  were: 'was',
  have: 'has',
  do: 'does',
  go: 'goes',
};
const UNCHANGED = /^(can|could|will|would|should|must|may|might|did|had|was|shall|\w+ed)$/;

/** "open" → "opens", "search" → "searches", "try" → "tries": the verb after a third-person subject. */
export function thirdPersonVerb(word: string): string {
  const lower = word.toLowerCase();
  if (IRREGULAR[lower]) return IRREGULAR[lower];
  if (UNCHANGED.test(lower)) return word;
  if (/(s|sh|ch|x|z|o)$/.test(lower)) return `${word}es`;
  if (/[^aeiou]y$/.test(lower)) return `${word.slice(0, -1)}ies`;
  return `${word}s`;
}

/** Second person into third, for memories and summaries read on their own. */
function thirdPerson(text: string, who: string): string {
  const subject = who;
  const object = who === 'The player' ? 'the player' : who;
  const possessive = who === 'The player' ? "the player's" : `${who}'s`;
  return (
    text
      .replace(/^> /gm, '')
      .replace(/\bYou say "/g, `${subject} says "`)
      .replace(/\byour\b/gi, possessive)
      .replace(/\byourself\b/gi, who === 'The player' ? 'themselves' : who)
      // "you" as a subject (sentence start or after a conjunction) takes a third-person verb
      .replace(
        /(^|[.!?…]\s+|\b(?:and|but|then|as|when|while|so|until|before|after)\s+|,\s+)[Yy]ou\s+([a-z]+)/gm,
        (_all, lead: string, verb: string) =>
          `${lead}${lead.trim() === '' || /[.!?…]/.test(lead) ? subject : object} ${thirdPersonVerb(verb)}`,
      )
      .replace(/\bYou\b/g, subject)
      .replace(/\byou\b/g, object)
      .replace(/\s+/g, ' ')
      .trim()
  );
}

function section(user: string, heading: string, next: RegExp): string {
  const at = user.indexOf(heading);
  if (at < 0) return '';
  const rest = user.slice(at + heading.length);
  const end = rest.search(next);
  return (end >= 0 ? rest.slice(0, end) : rest).trim();
}

function memoryText(user: string): string {
  const who = protagonist(user);
  const excerpt = section(user, 'Story excerpt:', /\n\s*Memory:\s*$/) || user;
  const sentences = thirdPerson(excerpt, who).match(/[^.!?…]+[.!?…]+["”']?/g) ?? [
    thirdPerson(excerpt, who),
  ];
  // the last sentences hold what this block ended on
  const chosen = sentences.slice(-2).join(' ').trim();
  return limitWords(sentenceCase(chosen || `${who} went on with the story.`), MEMORY_MAX_WORDS);
}

/** A chapter: its own most telling sentences, verbatim (libs/memory's chapter prompt). */
function chapterText(user: string): string {
  const chapter = section(user, 'Chapter:', /\n\s*Chapter summary:\s*$/);
  const text = extractiveSummary(chapter.split(/\n{2,}/), CHAPTER_MAX_WORDS);
  return text || limitWords(chapter, CHAPTER_MAX_WORDS);
}

function summaryText(user: string): string {
  const who = protagonist(user);
  const previous = section(
    user,
    'Current story summary:',
    /\n\s*New events since the last update:/,
  );
  const events = section(user, 'New events since the last update:', /\n\s*Updated summary:\s*$/);
  const old = previous && previous !== '(none yet)' ? thirdPerson(previous, who) : '';
  const fresh = thirdPerson(events || user, who);
  // old events are compressed harder than new ones
  const oldPart = limitWords(old, Math.floor(SUMMARY_MAX_WORDS / 2));
  const room = SUMMARY_MAX_WORDS - words(oldPart).length;
  const freshWords = words(fresh);
  const freshPart =
    freshWords.length > room ? freshWords.slice(-room).join(' ') : freshWords.join(' ');
  return limitWords([oldPart, freshPart].filter((p) => p.length > 0).join(' '), SUMMARY_MAX_WORDS);
}

function usageOf(prompt: string, output: string): ModelUsage {
  return {
    promptTokens: approxTokens(prompt),
    completionTokens: approxTokens(output),
    cachedTokens: 0,
  };
}

function cancelled(): ModelError {
  return new ModelError({
    kind: 'cancelled',
    retryable: false,
    message: 'The narration request was cancelled.',
  });
}

/**
 * Answers through the model-client interface with no network and no key, so
 * the whole pipeline runs out of the box. Same prompt, same reply.
 */
export class OfflineNarrator implements ModelClient {
  async *streamNarration(
    req: NarrationRequest,
    signal?: AbortSignal,
  ): AsyncIterable<ModelStreamEvent> {
    const { narration, block } = offlineReply(req.system, req.story);
    const text = `${narration}\n\n${block}`;
    const sentences = narration.match(/[^.!?…]+[.!?…]+["”']?\s*/g) ?? [narration];
    const pieces = [...sentences.slice(0, -1), `${sentences[sentences.length - 1]}\n\n`, block];
    for (const piece of pieces) {
      if (signal?.aborted) throw cancelled();
      // yield to the event loop so a consumer sees a stream, not one burst
      await new Promise<void>((resolve) => setImmediate(resolve));
      yield { type: 'text', text: piece };
    }
    if (signal?.aborted) throw cancelled();
    const prompt =
      req.mode === 'chat' ? Object.values(chatMessages(req)).join('\n') : completionPrompt(req);
    yield {
      type: 'done',
      usage: usageOf(prompt, text),
      finishReason: 'stop',
      model: OFFLINE_MODEL,
    };
  }

  async complete(req: CompletionRequest): Promise<CompletionResult> {
    if (req.signal?.aborted) throw cancelled();
    const purpose =
      req.purpose && req.purpose !== 'other'
        ? req.purpose
        : /Updated summary:\s*$/.test(req.user) || /summary/i.test(req.system)
          ? 'summary'
          : /Memory:\s*$/.test(req.user) || /memor/i.test(req.system)
            ? 'memory'
            : 'other';
    const text =
      purpose === 'summary'
        ? /\n\s*Chapter summary:\s*$/.test(req.user)
          ? chapterText(req.user)
          : summaryText(req.user)
        : purpose === 'memory'
          ? memoryText(req.user)
          : limitWords(thirdPerson(req.user, protagonist(req.user)), MEMORY_MAX_WORDS);
    return {
      text,
      usage: usageOf(`${req.system}\n${req.user}`, text),
      model: OFFLINE_MODEL,
      finishReason: 'stop',
    };
  }
}
