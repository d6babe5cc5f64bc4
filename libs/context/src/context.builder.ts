/*
 * Context assembly per AI Dungeon's memory system
 * (help.aidungeon.com/faq/the-memory-system):
 *
 *   [AI Instructions]        always included
 *   [Player Character]       always included when the adventure has a persona
 *   [Plot Essentials]        always included (classic "Memory")
 *   [Story Summary]          always included
 *   [Used Memories]          top-K memory-bank retrievals, when the bank is on
 *   [Triggered Story Cards]  "World Lore: <entry>", conditional; first dropped when over budget
 *   [Story history]          newest actions that fit the remaining token budget
 *   [Author's Note]          injected AUTHORS_NOTE_DEPTH actions before the end of history
 *   [Latest player action]   (+ the scripts' frontMemory)
 *
 * The list above comes from AI Dungeon's design. The order does not. This module emits every
 * fixed section first and every changing section after the history, because prompt caching
 * bills on a shared prefix. A section that changes near the top of the prompt re-prices
 * everything below it. See the comments on the static block and the live sections below.
 *
 * Speed: a token count is computed once per piece of text. An action's count is cached when it
 * is stored and arrives in `WindowAction.tokens`; the recurring sections go through the
 * tokenizer's memo; only the small live sections that changed are encoded on a turn. Section
 * counts made of several cached parts (the history, the lore) are the sum of those parts plus
 * their separators, which a test bounds against an encode of the joined text.
 */
import {
  EMIT_REMINDER,
  EMIT_RULE,
  renderCanon,
  renderForPrompt,
  renderRejections,
} from '@chronicle/narrative';
import type {
  BuiltContext,
  CardRecord,
  ContextBudget,
  ContextHead,
  ContextInput,
  ReadOlder,
  ReadOlderSync,
  ReportSection,
  WindowAction,
} from './context.types';
import { WINDOW_START, windowCovering, windowCoveringSync } from './history.window';
import { lengthHint } from './length-hint';
import { renderPersona } from './persona.render';
import { matchCards } from './story-cards.match';
import { DEFAULT_ENCODING, tokenizer, type Tokenizer } from './tokenizer';

/** Actions from the end of history at which the author's note goes. */
export const AUTHORS_NOTE_DEPTH = 3;
/** Max share of the non-reserved budget that story cards may take. */
export const CARD_BUDGET_SHARE = 0.4;
/** Story actions searched for the previous AI turn (its rejections). */
export const NPC_WINDOW = 6;
/** History always gets at least this many tokens, however much the fixed sections take. */
export const MIN_AVAILABLE = 256;
export const SEPARATOR = '\n\n';
const LORE_SEPARATOR = '\n';

type Section = ReportSection;

interface Prepared {
  tok: Tokenizer;
  separatorTokens: number;
  system: Section[];
  summary: Section | null;
  memories: Section | null;
  state: Section | null;
  authorsNote: string;
  frontMemory: string;
  lengthNote: string;
  refusalNote: string;
  budget: ContextBudget;
}

// BPE pre-tokenization glues newlines onto a trailing run of punctuation: "end.\n\n" is two
// tokens, not three. So the cost of a separator depends on the text before it. Only the report's
// counts use this (the budget keeps the seed's flat tokens-plus-separator cost); it is what keeps
// a sum of cached parts within a fraction of a percent of encoding the joined text.
const TRAILING_PUNCTUATION = / ?[^\s\p{L}\p{N}]+$/u;

function joinTokens(tok: Tokenizer, before: string, separator: string): number {
  const run = TRAILING_PUNCTUATION.exec(before.slice(-16));
  if (!run) return tok.countCached(separator);
  return tok.countCached(run[0] + separator) - tok.countCached(run[0]);
}

/** Tokens of `parts` joined by `separator`, from the parts' own (cached) counts. */
function joinedTokens(
  tok: Tokenizer,
  parts: readonly { text: string; tokens: number }[],
  separator: string,
): number {
  let total = 0;
  for (let i = 0; i < parts.length; i++) {
    total += parts[i].tokens;
    if (i > 0) total += joinTokens(tok, parts[i - 1].text, separator);
  }
  return total;
}

function section(tok: Tokenizer, label: string, text: string): Section {
  return { label, text, tokens: tok.countCached(text) };
}

function scriptString(memory: Record<string, unknown> | null, key: string): string | null {
  const value = memory && typeof memory === 'object' ? memory[key] : undefined;
  return typeof value === 'string' ? value : null;
}

function withoutExcluded(actions: readonly WindowAction[], exclude: string | null | undefined) {
  return exclude == null ? actions : actions.filter((action) => action.id !== exclude);
}

/** Everything but the lore and the history: the pieces whose size decides the budget. */
function prepare(head: ContextHead, recentActions: readonly WindowAction[]): Prepared {
  const tok = tokenizer(head.settings.encoding ?? DEFAULT_ENCODING);
  const scriptMemory = head.scriptMemory;

  // ----- The static block, which is identical on every turn -----
  // This ordering exists to reduce cost. Prompt caching matches a prefix. The endpoint reuses
  // the prompt up to the first byte that differs from the previous request, and no further. A
  // section that changes near the top therefore re-prices everything below it, and what sits
  // below it is the story history, which is most of the prompt. Sections that change from turn
  // to turn go after the history, among the live sections. Placing them there also gives them
  // the most recency, which is why `EMIT_REMINDER` goes last.
  const system: Section[] = [];
  const addSystem = (label: string, text: string) => {
    if (text) system.push(section(tok, label, text));
  };
  addSystem('narrator', head.settings.narratorPrompt.trim());
  // The typed-event protocol is unconditional: a story has entities, places and possessions
  // whatever genre it is. The rule does not change while the adventure runs.
  addSystem('state_rule', EMIT_RULE);
  // Canon is configuration: the campaign writes what is true and what is forbidden, and both
  // the prompt and the validator read the same field. Putting it in the system block makes it
  // a narration-time constraint as well as a validation-time one: the model is told the rule
  // rather than only refused after breaking it.
  addSystem('campaign_canon', head.canon ? renderCanon(head.canon) : '');
  addSystem('script_context', (scriptString(scriptMemory, 'context') ?? '').trim());
  addSystem('ai_instructions', head.aiInstructions.trim());
  // This sits in the static block because only the user can edit it, so it never changes
  // mid-story and stays inside the cached prefix. It is emitted whatever the genre: every
  // adventure has a protagonist, and that is the case the persona was added for.
  addSystem('persona', renderPersona(head.persona));
  const plotEssentials = head.plotEssentials.trim();
  addSystem('plot_essentials', plotEssentials ? `Plot essentials:\n${plotEssentials}` : '');

  // ----- Live sections, which hold everything that changes -----
  // Built here and placed after the history. They are ordered from least to most volatile, so
  // a turn that changes only the fastest-moving section leaves the others cached. The summary
  // is rewritten every few turns. Lore changes with the scene. The retrieved memories change on
  // most turns, and the state changes on nearly every turn. `world_lore` is added later,
  // because the history window determines which cards trigger.
  const summaryText = head.storySummary.trim();
  const summary = summaryText
    ? section(tok, 'story_summary', `Story summary:\n${summaryText}`)
    : null;
  const used = head.memories?.used ?? [];
  const memories =
    used.length > 0
      ? section(tok, 'used_memories', `Memories:\n${used.map((m) => `- ${m.text}`).join('\n')}`)
      : null;
  // The authoritative narrative state, as the model is shown it: the state at the head being
  // played, so an undone story is described by the state it had then. It appears exactly once.
  const stateText = head.narrativeState ? renderForPrompt(head.narrativeState) : '';
  const state = stateText ? section(tok, 'narrative_state', stateText) : null;

  // Corrections for the previous AI turn only. A refusal the model has already had one chance
  // to fix is stale, and repeating it every turn would price a correction into the whole rest
  // of the adventure. The retried take is not the previous turn.
  const recent = withoutExcluded(recentActions, head.excludeActionId).slice(-NPC_WINDOW);
  let lastAi: WindowAction | undefined;
  for (let i = recent.length - 1; i >= 0 && !lastAi; i--) {
    if (recent[i].type === 'ai') lastAi = recent[i];
  }
  const refusalNote = lastAi?.rejections?.length ? renderRejections(lastAi.rejections) : '';

  let authorsNoteText = head.authorsNote.trim();
  const scriptNote = (scriptString(scriptMemory, 'authorsNote') ?? '').trim();
  if (scriptNote) authorsNoteText = scriptNote;
  const authorsNote = authorsNoteText ? `[Author's note: ${authorsNoteText}]` : '';
  const frontMemory = (scriptString(scriptMemory, 'frontMemory') ?? '').trim();
  const lengthNote = lengthHint(head.settings.maxOutputTokens);

  // The live sections sit below the history, but they are still part of the prompt, so they
  // still count against the budget. `world_lore` is the exception: it is budgeted out of
  // `available`.
  const reserved =
    system.reduce((sum, s) => sum + s.tokens, 0) +
    (summary?.tokens ?? 0) +
    (memories?.tokens ?? 0) +
    (state?.tokens ?? 0) +
    tok.countCached(authorsNote) +
    tok.countCached(frontMemory) +
    tok.countCached(lengthNote) +
    tok.countCached(EMIT_REMINDER) +
    tok.countCached(refusalNote);
  // However large the fixed sections grow, some story is sent: a prompt with no story in it
  // cannot continue the story.
  const available = Math.max(MIN_AVAILABLE, head.settings.contextTokenBudget - reserved);

  return {
    tok,
    separatorTokens: tok.countCached(SEPARATOR),
    system,
    summary,
    memories,
    state,
    authorsNote,
    frontMemory,
    lengthNote,
    refusalNote,
    budget: { reserved, available },
  };
}

/**
 * The tokens the fixed and live sections reserve, and what is left for lore and history.
 * `recent` is the newest story actions (newest last; the first slice of the window is ideal):
 * the previous AI turn's rejections are part of the reserved text.
 */
export function contextBudget(head: ContextHead, recent: readonly WindowAction[]): ContextBudget {
  return prepare(head, recent).budget;
}

/**
 * The joined window cut to its last `available` tokens: the text that history could fill.
 * Built from the cached counts, each separator costed for the text it follows as it encodes in
 * the joined text; only the one action the cut falls inside is encoded.
 */
function triggerText(window: readonly WindowAction[], available: number, tok: Tokenizer): string {
  const parts: string[] = [];
  let remaining = available;
  for (let i = window.length - 1; i >= 0; i--) {
    const action = window[i];
    const separator = parts.length > 0 ? joinTokens(tok, action.text, SEPARATOR) : 0;
    if (action.tokens + separator <= remaining) {
      parts.push(action.text);
      remaining -= action.tokens + separator;
      continue;
    }
    const room = remaining - separator;
    if (room > 0) parts.push(tok.lastTokens(action.text, room));
    break;
  }
  return parts.reverse().join(SEPARATOR);
}

/** Returns the system text, the story text and the context report for one turn. */
// eslint-disable-next-line max-lines-per-function -- the sections are budgeted in the order the predecessor fills them, each reading what the ones before it left; the order is the algorithm
export function buildContext(input: ContextInput): BuiltContext {
  const window = withoutExcluded(input.window, input.excludeActionId);
  const prepared = prepare(input, window);
  const { tok, separatorTokens } = prepared;
  const { available } = prepared.budget;

  // ----- Story cards: triggered by recent story text (the window history could fill) -----
  const triggered = matchCards(input.storyCards, triggerText(window, available, tok));
  const cardBudget = Math.floor(available * CARD_BUDGET_SHARE);
  const cards: CardRecord[] = [];
  const loreLines: string[] = [];
  let loreTokens = 0;
  for (const match of triggered) {
    const line = `World Lore: ${match.entry.trim()}`;
    const tokens = tok.countCached(line);
    // A card that does not fit is skipped, not the end of the lore: a later, smaller card may
    // still fit.
    const included = loreTokens + tokens <= cardBudget;
    if (included) {
      loreLines.push(line);
      loreTokens += tokens;
    }
    cards.push({ id: match.id, name: match.name, keyword: match.keyword, included });
  }
  const lore: Section | null = loreLines.length
    ? {
        label: 'world_lore',
        text: loreLines.join(LORE_SEPARATOR),
        tokens: joinedTokens(
          tok,
          loreLines.map((line) => ({ text: line, tokens: tok.countCached(line) })),
          LORE_SEPARATOR,
        ),
      }
    : null;

  // ----- Story history: newest first until the remaining budget is spent -----
  const historyBudget = available - loreTokens;
  const included: { text: string; tokens: number }[] = [];
  let spent = 0;
  let oldestTruncated = false;
  for (let i = window.length - 1; i >= 0; i--) {
    const action = window[i];
    // History is prose only: the state block is never replayed into it. Replaying it put a
    // second, older account of the world into the same prompt as the authoritative one, with
    // nothing marking which governed, so a fact the reader had withdrawn by a correction came
    // straight back as an accepted event. A turn's events record what was true then, which is
    // precisely what a later correction, retcon or invalidation revises. `EMIT_RULE` carries a
    // worked example of the format in the system block and `EMIT_REMINDER` repeats it last.
    const cost = action.tokens + separatorTokens;
    if (spent + cost > historyBudget) {
      if (included.length === 0) {
        // Even the newest action alone is over budget: keep its end rather than send no story.
        const text = tok.lastTokens(action.text, historyBudget);
        included.push({ text, tokens: tok.count(text) });
        oldestTruncated = true;
      }
      break;
    }
    included.push({ text: action.text, tokens: action.tokens });
    spent += cost;
  }
  included.reverse();

  // ----- Assemble the story text, with the author's note near the end -----
  const joined = (label: string, parts: typeof included): Section => ({
    label,
    text: parts.map((p) => p.text).join(SEPARATOR),
    tokens: joinedTokens(tok, parts, SEPARATOR),
  });
  const story: (Section | null)[] = [];
  if (prepared.authorsNote) {
    const pos = Math.max(0, included.length - AUTHORS_NOTE_DEPTH);
    story.push(joined('history', included.slice(0, pos)));
    story.push(section(tok, 'authors_note', prepared.authorsNote));
    story.push(joined('recent_history', included.slice(pos)));
  } else {
    story.push(joined('history', included));
  }
  // The live sections, ordered from least to most volatile. They go below the history so that
  // the history stays cached, and above the final sections so that those stay last.
  story.push(prepared.summary, lore, prepared.memories, prepared.state);
  story.push(section(tok, 'front_memory', prepared.frontMemory));
  // The length hint goes just above the emit reminder, which keeps the last position. The
  // length budget applies to the narration and the reminder to the block that follows it, so
  // this is also the order in which the model acts.
  story.push(section(tok, 'length_hint', prepared.lengthNote));
  // A correction for the previous turn sits directly above the reminder to emit a block,
  // which is the instruction it modifies.
  story.push(section(tok, 'state_refusals', prepared.refusalNote));
  // The emit rule sits in the system block, far from where the model generates text, so it is
  // repeated last, where it has the most effect.
  story.push(section(tok, 'state_reminder', EMIT_REMINDER));

  const storySections = story.filter((s): s is Section => s !== null && s.text !== '');
  const systemSections = prepared.system;
  const system = systemSections.map((s) => s.text).join(SEPARATOR);
  const storyText = storySections.map((s) => s.text).join(SEPARATOR);

  const { settings } = input;
  return {
    system,
    story: storyText,
    report: {
      sections: [...systemSections, ...storySections].map(({ label, text, tokens }) => ({
        label,
        text,
        tokens,
      })),
      prompt: { system, story: storyText },
      tokens: {
        total:
          joinedTokens(tok, systemSections, SEPARATOR) +
          joinedTokens(tok, storySections, SEPARATOR),
        budget: settings.contextTokenBudget,
      },
      cards,
      memories: input.memories,
      history: {
        included: included.length,
        // The whole story rather than the window that was read: the report says how many of
        // the story's actions it included, so this must be the real total.
        total: input.totalActions,
        oldest_truncated: oldestTruncated,
      },
      settings: {
        model: settings.model,
        api_mode: settings.apiMode,
        temperature: settings.temperature,
        max_output_tokens: settings.maxOutputTokens,
      },
    },
  };
}

/**
 * The whole turn's assembly as the context worker runs it: the first slice of the story sizes
 * the budget (it holds the previous AI turn), the window is read to cover it, and the prompt
 * is built.
 */
export async function assembleContext(
  head: ContextHead,
  readOlder: ReadOlder,
): Promise<BuiltContext> {
  const first = await readOlder(0, WINDOW_START);
  const { available } = contextBudget(head, first);
  const window = await windowCovering(readOlder, available, {
    excludeActionId: head.excludeActionId,
    prefetched: first,
  });
  return buildContext({ ...head, window });
}

/** `assembleContext` over a story already in memory. */
export function assembleContextSync(head: ContextHead, readOlder: ReadOlderSync): BuiltContext {
  const first = readOlder(0, WINDOW_START);
  const { available } = contextBudget(head, first);
  const window = windowCoveringSync(readOlder, available, {
    excludeActionId: head.excludeActionId,
    prefetched: first,
  });
  return buildContext({ ...head, window });
}
