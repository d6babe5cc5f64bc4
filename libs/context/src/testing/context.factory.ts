import type { NarrativeState, Rejection } from '@chronicle/narrative';
import type {
  ContextHead,
  ContextSettings,
  StoryCard,
  UsedMemory,
  WindowAction,
} from '../context.types';
import { tokenizer, type TokenEncoding } from '../tokenizer';
import { proseGenerator } from './prose.factory';

export const NARRATOR_PROMPT =
  'You are a masterful storyteller. Continue the story in the second person, consistent and ' +
  'vivid. Never speak or act for the player, never break character, and never conclude the story.';

export function someSettings(overrides: Partial<ContextSettings> = {}): ContextSettings {
  return {
    narratorPrompt: NARRATOR_PROMPT,
    model: 'test-model',
    apiMode: 'chat',
    temperature: 0.8,
    maxOutputTokens: 800,
    contextTokenBudget: 16384,
    encoding: 'cl100k_base',
    // The seed's window: the specs and golden prompts written against the seed keep it; the
    // stable window's specs ask for it.
    historyMode: 'sliding',
    ...overrides,
  };
}

/** An adventure with nothing in it but the settings; override what a test is about. */
export function aContextHead(
  overrides: Omit<Partial<ContextHead>, 'settings'> & { settings?: Partial<ContextSettings> } = {},
): ContextHead {
  const { settings, ...rest } = overrides;
  return {
    persona: null,
    plotEssentials: '',
    authorsNote: '',
    aiInstructions: '',
    canon: null,
    storyCards: [],
    storySummary: '',
    narrativeState: null,
    scriptMemory: null,
    totalActions: 0,
    memories: null,
    excludeActionId: null,
    ...rest,
    settings: someSettings(settings),
  };
}

/** `ContextHead.storyTokens` of a story path: every story action's tokens plus a separator. */
export function storyTokensOf(path: readonly WindowAction[], excludeActionId?: string | null) {
  const separator = tokenizer('cl100k_base').count('\n\n');
  return path
    .filter((action) => /[^ \n\r\t]/.test(action.text) && action.id !== excludeActionId)
    .reduce((sum, action) => sum + action.tokens + separator, 0);
}

/** A stored action: its token count computed once, as the store does. */
export function anAction(
  id: string,
  text: string,
  type: WindowAction['type'] = 'do',
  extra: Partial<WindowAction> = {},
  encoding: TokenEncoding = 'cl100k_base',
): WindowAction {
  return { id, type, text, tokens: tokenizer(encoding).count(text), ...extra };
}

/**
 * A generated story, oldest first: an opening, then player actions and AI narrations in turn.
 * Ids are `${prefix}${index}`.
 */
export function aStory(
  count: number,
  { seed = 1, encoding = 'cl100k_base' as TokenEncoding, prefix = 'a' } = {},
): WindowAction[] {
  const prose = proseGenerator(seed);
  const story: WindowAction[] = [];
  for (let i = 0; i < count; i++) {
    const id = `${prefix}${i}`;
    if (i === 0) story.push(anAction(id, prose.narration(), 'start', {}, encoding));
    else if (i % 2 === 1) {
      const { type, text } = prose.playerAction();
      story.push(anAction(id, text, type, {}, encoding));
    } else story.push(anAction(id, prose.narration(), 'ai', {}, encoding));
  }
  return story;
}

export function aCard(id: string, keys: string, entry: string, name = id): StoryCard {
  return { id, name, keys, entry, type: 'character' };
}

export function someMemories(texts: string[]): { used: UsedMemory[] } {
  return {
    used: texts.map((text, i) => ({
      id: `m${i}`,
      text,
      similarity: 0.9 - i / 100,
      pinned: i === 0,
    })),
  };
}

export function aNarrativeState(turn = 0): NarrativeState {
  return {
    entities: {
      mira: {
        id: 'mira',
        name: 'Mira',
        kind: 'character',
        status: turn % 2 ? 'wary' : 'calm',
        at: 'harbour',
      },
      harbour: { id: 'harbour', name: 'Saltmarch harbour', kind: 'place' },
      key: { id: 'key', name: 'brass key', kind: 'item', holder: 'player' },
    },
    facts: Array.from({ length: 1 + (turn % 4) }, (_, i) => ({
      text: `Fact ${i} of turn ${turn}.`,
    })),
  };
}

export function aRejection(line: string): Rejection {
  return { line, reason: `"${line}" names no known entity`, fix: 'Use an id from the state.' };
}

export interface FixtureAdventure {
  name: string;
  head: ContextHead;
  /** The story path, oldest first. */
  path: WindowAction[];
}

/** The three adventures whose prompts are checked in under `golden/`. */
export function fixtureAdventures(): FixtureAdventure[] {
  const lighthousePath = aStory(14, { seed: 7, prefix: 'l' });
  lighthousePath[11] = anAction('l11', 'You ask Mira where the lamp oil went.', 'say');
  lighthousePath[12] = {
    ...lighthousePath[12],
    rejections: [aRejection('status ghost -> alive'), aRejection('gain mira lantern-of-ages')],
  };
  const lighthouse: FixtureAdventure = {
    name: 'lighthouse',
    path: lighthousePath,
    head: aContextHead({
      settings: { contextTokenBudget: 2048, maxOutputTokens: 800 },
      persona: {
        name: 'Ada Quill',
        pronouns: 'she/her',
        description: 'A lighthouse keeper with a debt.',
      },
      plotEssentials:
        'The lighthouse has been dark for three nights.\nThe harbour master owes Ada money.',
      authorsNote: 'Keep the tone bleak and the weather hostile.',
      aiInstructions: 'Write in present tense. Avoid purple prose.',
      canon: {
        rules: ['The dead do not return.'],
        forbiddenStatusChanges: [{ from: 'dead', to: 'alive' }],
      },
      storyCards: [
        aCard(
          'c1',
          'Mira, the smuggler',
          'Mira is a smuggler who runs lamp oil past the customs house.',
        ),
        aCard(
          'c2',
          'lighthouse, lamp',
          'The lighthouse lamp burns whale oil and needs tending every four hours.',
        ),
        aCard('c3', 'kraken', 'No one has seen the kraken in forty years.'),
      ],
      storySummary: 'Ada returned to Saltmarch to collect a debt and found the lighthouse dark.',
      narrativeState: aNarrativeState(3),
      memories: someMemories([
        'Ada promised Mira a share of the salvage.',
        'The ledger is missing a page.',
      ]),
      totalActions: lighthousePath.length,
    }),
  };

  const bare: FixtureAdventure = {
    name: 'bare',
    path: [anAction('b0', 'You wake on a cold beach. The tide is coming in.', 'start')],
    head: aContextHead({
      settings: { maxOutputTokens: 300, contextTokenBudget: 1024 },
      totalActions: 1,
    }),
  };

  const longPath = aStory(301, { seed: 11, prefix: 'x' });
  // The newest take is being retried: its rejections and its words must not reach the prompt.
  const retried = { ...longPath[300], rejections: [aRejection('move ferryman nowhere')] };
  longPath[300] = retried;
  const archive: FixtureAdventure = {
    name: 'archive-retry',
    path: longPath,
    head: aContextHead({
      settings: {
        contextTokenBudget: 4096,
        maxOutputTokens: 2400,
        apiMode: 'completion',
        encoding: 'cl100k_base',
      },
      persona: { name: '', pronouns: '', description: 'A cartographer who cannot read.' },
      plotEssentials: 'The archive burned. Someone survived it.',
      authorsNote: 'Make every stranger a suspect.',
      storyCards: [
        aCard(
          'k1',
          'the ferryman, ferry',
          'The ferryman takes only silver and never speaks first.',
        ),
        aCard(
          'k2',
          'ledger',
          `The ledger lists every debt in Saltmarch. ${'It runs to many pages. '.repeat(400)}`,
        ),
        aCard('k3', 'compass', 'The silver compass points at whatever its holder fears most.'),
        aCard('k4', 'Renée, café', 'Renée runs the café on Rue Morne and hears everything.'),
        aCard('k5', '🐉, dragon-bone', 'Dragon-bone dice always roll true for their maker.'),
      ],
      scriptMemory: {
        context: 'Scripted: the archive fire happened ten years ago.',
        authorsNote: 'Scripted note: the rain never stops.',
        frontMemory: 'The lantern gutters.',
        other: 42,
      },
      storySummary: 'The cartographer searches the burned archive for the page that names her.',
      narrativeState: aNarrativeState(8),
      memories: someMemories(['The ferryman refused gold.']),
      totalActions: longPath.length - 1,
      excludeActionId: retried.id,
    }),
  };
  return [lighthouse, bare, archive];
}
