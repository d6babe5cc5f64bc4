/* eslint-disable max-lines -- the prompt's sections in the order they are placed, under one token budget; each helper below serves one section, and split they would hide the order the builder keeps */
/*
 * Context assembly per AI Dungeon's memory system
 * (help.aidungeon.com/faq/the-memory-system):
 *
 *   [AI Instructions]        always included
 *   [Player Character]       always included when the adventure has a persona; in a room,
 *                            every active player's character
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
  CacheReport,
  CardRecord,
  ContextBudget,
  ContextHead,
  ContextInput,
  PassageReport,
  ReadOlder,
  RecalledPassage,
  RecalledPassages,
  ReadOlderSync,
  ReportSection,
  StoryRole,
  WindowAction,
} from './context.types';
import { WINDOW_START, windowCovering, windowCoveringSync } from './history.window';
import { lengthHint } from './length-hint';
import { renderPersona, renderPlayers } from './persona.render';
import { activateLore, staticLore } from './lore/lore.activate';
import {
  cacheableTokens,
  DEFAULT_HISTORY_MODE,
  stableBlockTokens,
  stableStart,
  type HistoryMode,
} from './prompt-cache';
import { memoriesWithinBudget, storyBudgetSplit, summaryText } from './memory.budget';
import { DEFAULT_ENCODING, tokenizer, type Tokenizer } from './tokenizer';

/** Actions from the end of history at which the author's note goes. */
export const AUTHORS_NOTE_DEPTH = 3;
/** Max share of the non-reserved budget that story cards may take. */
export const CARD_BUDGET_SHARE = 0.4;
/** Story actions searched for the previous AI turn (its rejections). */
export const NPC_WINDOW = 6;
/**
 * The share of the history's budget recalled passages take when any is recalled, chosen by the
 * recall bench's sweep (`npm run bench -- recall --recall-share …`; BENCHMARKS.md, "Issue 26:
 * recall"): below 0.4 evidence is dropped at 4k and 8k, above it history is given up for no
 * recall gained, and 0.5 was the best at 4k on the held-back check.
 */
export const RECALL_SHARE = 0.5;
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
  staticCards: CardRecord[];
}

// BPE pre-tokenization glues the separator onto the runs of punctuation and whitespace around
// it: "end.\n\n" is two tokens, not three, and " \n" + "\n\n" + "\nNext" has one token of
// whitespace where the parts alone have three. So a separator's cost depends on the texts on
// both sides. Only the report's counts and the card trigger's cut use this (the budget keeps
// the seed's flat tokens-plus-separator cost); it is what keeps a sum of cached parts equal to
// encoding the joined text, and the trigger's cut where the seed's encode puts it.
//
// The cost is measured on the edges alone: the run of non-letters and non-digits that ends the
// text before (with one character ahead of it) and the one that starts the text after (with one
// character after it), since a pre-token never reaches past a letter or digit run into them.
const EDGE_CHARS = 64;
const WORD_CHAR = /[\p{L}\p{N}]/u;

function isWordChar(text: string, at: number): boolean {
  const code = text.charCodeAt(at);
  if (code < 128) {
    return (code >= 48 && code <= 57) || (code >= 65 && code <= 90) || (code >= 97 && code <= 122);
  }
  return WORD_CHAR.test(text[at]);
}

/** The separator's tokens between `before` and `after`, as it encodes in the joined text. */
function joinTokens(tok: Tokenizer, before: string, separator: string, after = ''): number {
  const stop = Math.max(0, before.length - EDGE_CHARS);
  let tailStart = before.length;
  while (tailStart > stop && !isWordChar(before, tailStart - 1)) tailStart--;
  const end = Math.min(after.length, EDGE_CHARS);
  let headEnd = 0;
  while (headEnd < end && !isWordChar(after, headEnd)) headEnd++;
  // Word characters on both sides: the separator is its own pre-token.
  if (tailStart === before.length && headEnd === 0) return tok.countCached(separator);
  const tail = before.slice(Math.max(0, tailStart - 1));
  const head = after.slice(0, headEnd + 1);
  return tok.countCached(tail + separator + head) - tok.countCached(tail) - tok.countCached(head);
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
    if (i > 0) total += joinTokens(tok, parts[i - 1].text, separator, parts[i].text);
  }
  return total;
}

function section(tok: Tokenizer, label: string, text: string): Section {
  return { label, text, tokens: tok.countCached(text) };
}

function historyModeOf(head: ContextHead): HistoryMode {
  return head.settings.historyMode ?? DEFAULT_HISTORY_MODE;
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
  // A room lists every active player's character instead, with the rule that the narrator
  // plays none of them; one player keeps the persona section byte for byte.
  if (head.players?.length) addSystem('players', renderPlayers(head.players));
  else addSystem('persona', renderPersona(head.persona));
  const plotEssentials = head.plotEssentials.trim();
  addSystem('plot_essentials', plotEssentials ? `Plot essentials:\n${plotEssentials}` : '');
  // Always-on cards that render the same every turn belong to the static block: the prompt
  // cache keeps them, and they leave the live lore budget to the cards that trigger.
  const staticCards = staticLore(head.storyCards, {
    user: loreUser(head),
    seed: head.loreSeed ?? '',
    countTokens: (text) => tok.countCached(text),
    budget: Math.floor(head.settings.contextTokenBudget * CARD_BUDGET_SHARE),
    contextTokens: head.settings.contextTokenBudget,
    cut: tok,
  });
  addSystem('static_lore', staticCards.text);

  // ----- Live sections, which hold everything that changes -----
  // Built here and placed after the history. They are ordered from least to most volatile, so
  // a turn that changes only the fastest-moving section leaves the others cached. The summary
  // is rewritten every few turns. Lore changes with the scene. The retrieved memories change on
  // most turns, and the state changes on nearly every turn. `world_lore` is added later,
  // because the history window determines which cards trigger.
  // The summary and the memories keep to their shares of the budget (memory.budget.ts).
  const count = (text: string) => tok.countCached(text);
  const budgetTokens = head.settings.contextTokenBudget;
  const told = summaryText(head.storySummary, head.storyChapters ?? [], budgetTokens, count);
  const summary = told ? section(tok, 'story_summary', `Story summary:\n${told}`) : null;
  // `stable` lists the retrieved memories in a fixed order (pinned first, then by id) rather than
  // by this turn's similarity: the set changes by a memory or two from turn to turn, and a fixed
  // order keeps the memories they share a byte-identical prefix of the section. The seed's
  // `sliding` keeps the retrieval's order.
  const ranked = memoriesWithinBudget(head.memories?.used ?? [], budgetTokens, count);
  const used =
    historyModeOf(head) === 'stable'
      ? [...ranked].sort(
          (a, b) => Number(b.pinned) - Number(a.pinned) || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0),
        )
      : ranked;
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
    staticCards: staticCards.records,
  };
}

/** `{{user}}`: the persona's name, or how the second-person story names the player. */
function loreUser(head: ContextHead): string {
  return head.persona?.name.trim() || 'you';
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
function triggerParts(
  window: readonly WindowAction[],
  available: number,
  tok: Tokenizer,
): string[] {
  const parts: string[] = [];
  let remaining = available;
  for (let i = window.length - 1; i >= 0; i--) {
    const action = window[i];
    const separator =
      parts.length > 0 ? joinTokens(tok, action.text, SEPARATOR, window[i + 1].text) : 0;
    if (action.tokens + separator <= remaining) {
      parts.push(action.text);
      remaining -= action.tokens + separator;
      continue;
    }
    const room = remaining - separator;
    if (room > 0) parts.push(tok.lastTokens(action.text, room));
    break;
  }
  return parts.reverse();
}

/**
 * Where `stable` history may start: the block starts of the window, counted from the story's
 * start. null when the mode is `sliding` or the story's total is unknown.
 */
interface StableBlocks {
  blockTokens: number;
  costs: number[];
  before: number;
}

function stableBlocks(
  input: ContextInput,
  window: readonly WindowAction[],
  separatorTokens: number,
) {
  if (historyModeOf(input) !== 'stable' || input.storyTokens === undefined) return null;
  const costs = window.map((action) => action.tokens + separatorTokens);
  const inWindow = costs.reduce((sum, cost) => sum + cost, 0);
  return {
    blockTokens: stableBlockTokens(
      input.settings.contextTokenBudget,
      input.settings.historyBlockShare,
    ),
    costs,
    before: Math.max(0, input.storyTokens - inWindow),
  } satisfies StableBlocks;
}

/** Returns the system text, the story text and the context report for one turn. */
// eslint-disable-next-line max-lines-per-function -- the sections are budgeted in the order the predecessor fills them, each reading what the ones before it left; the order is the algorithm
export function buildContext(input: ContextInput): BuiltContext {
  const window = withoutExcluded(input.window, input.excludeActionId);
  const prepared = prepare(input, window);
  const { tok, separatorTokens } = prepared;
  const { available } = prepared.budget;
  const mode = historyModeOf(input);
  const blocks = stableBlocks(input, window, separatorTokens);

  // ----- Story cards: triggered by recent story text (the window history could fill) -----
  // `stable`: the texts from the oldest block start whose suffix fits `available` — what its
  // history could fill, as the seed's is the last `available` tokens of the window.
  const triggerStart = blocks
    ? stableStart(blocks.costs, blocks.before, blocks.blockTokens, available)
    : null;
  const parts =
    triggerStart === null
      ? triggerParts(window, available, tok)
      : window.slice(triggerStart).map((action) => action.text);
  // A card that does not fit is skipped, not the end of the lore: a later, smaller card may
  // still fit (lore/lore.activate.ts).
  const activated = activateLore(
    input.storyCards,
    { parts },
    {
      user: loreUser(input),
      seed: input.loreSeed ?? '',
      budget: Math.floor(available * CARD_BUDGET_SHARE),
      countTokens: (text) => tok.countCached(text),
      storyActions: input.totalActions,
      timed: input.timedLore,
      contextTokens: input.settings.contextTokenBudget,
      cut: tok,
    },
  );
  const cards: CardRecord[] = [...prepared.staticCards, ...activated.records];
  const loreLines = activated.lines;
  const loreTokens = activated.tokens;
  const lore: Section | null = loreLines.length
    ? {
        label: 'world_lore',
        text: loreLines.map((line) => line.text).join(LORE_SEPARATOR),
        tokens: joinedTokens(tok, loreLines, LORE_SEPARATOR),
      }
    : null;

  // ----- Story history -----
  // History is prose only: the state block is never replayed into it. Replaying it put a
  // second, older account of the world into the same prompt as the authoritative one, with
  // nothing marking which governed, so a fact the reader had withdrawn by a correction came
  // straight back as an accepted event. A turn's events record what was true then, which is
  // precisely what a later correction, retcon or invalidation revises. `EMIT_RULE` carries a
  // worked example of the format in the system block and `EMIT_REMINDER` repeats it last.
  const fullBudget = available - loreTokens;
  const full = chooseHistory(window, blocks, fullBudget, separatorTokens, tok);
  // Recalled passages take a share of the history's budget, and only when one is recalled
  // that the history at its full budget would not hold: otherwise the prompt is the
  // history-only prompt, byte for byte.
  const memoryTokens = (prepared.summary?.tokens ?? 0) + (prepared.memories?.tokens ?? 0);
  const recall = recallPassages(
    input,
    window,
    full,
    fullBudget,
    memoryTokens,
    separatorTokens,
    tok,
  );
  const historyBudget = recall ? fullBudget - recall.budget : fullBudget;
  const { included, spent, oldestTruncated, historyStart } = recall?.history ?? full;

  // ----- Assemble the story text, with the author's note near the end -----
  const joined = (label: string, parts: typeof included): Section => ({
    label,
    text: parts.map((p) => p.text).join(SEPARATOR),
    tokens: joinedTokens(tok, parts, SEPARATOR),
  });
  const story: (Section | null)[] = [];
  // What goes inside the history, by depth (actions from its end): the cards placed at a depth,
  // and in `sliding` the author's note. Without depth cards this is the seed's one split.
  const inserts: { at: number; section: Section }[] = [];
  // The author's note with the cards placed at its top and bottom (SillyTavern's AN positions),
  // where each history mode puts the note; the cards go there when the note is empty too.
  const noteLore = (edge: 'top' | 'bottom'): Section[] =>
    activated.authorsNote
      .filter((entry) => entry.edge === edge)
      .map((entry) => ({
        label: `lore_authors_note_${edge}`,
        text: entry.text,
        tokens: entry.tokens,
      }));
  const authorsNote: Section[] = [
    ...noteLore('top'),
    section(tok, 'authors_note', prepared.authorsNote),
    ...noteLore('bottom'),
  ].filter((s) => s.text !== '');
  if (mode === 'sliding') {
    for (const note of authorsNote) {
      inserts.push({ at: Math.max(0, included.length - AUTHORS_NOTE_DEPTH), section: note });
    }
  }
  for (const entry of activated.depth) {
    inserts.push({
      at: Math.max(0, included.length - entry.depth),
      section: { label: `lore_depth_${entry.role}`, text: entry.text, tokens: entry.tokens },
    });
  }
  // Deeper first; at one depth the author's note first, then the cards in render order.
  inserts.sort((a, b) => a.at - b.at);
  let from = 0;
  inserts.forEach((insert, i) => {
    if (insert.at > from || i === 0) {
      story.push(
        joined(from === 0 ? 'history' : 'recent_history', included.slice(from, insert.at)),
      );
      from = insert.at;
    }
    story.push(insert.section);
  });
  story.push(
    joined(from === 0 && inserts.length === 0 ? 'history' : 'recent_history', included.slice(from)),
  );
  // `stable` puts the note right after the history, not three actions before its end: there,
  // every turn moved the note and re-sent the three actions after it uncached (the next
  // prompt has story where this one had the note). Right after the history it is still below
  // every action, so it keeps its recency, and it is the least volatile of the live sections
  // (only an edit changes it), so it heads them. Depth cards stay inside the history in both
  // modes.
  if (mode !== 'sliding') story.push(...authorsNote);
  // The live sections, ordered from least to most volatile. They go below the history so that
  // the history stays cached, and above the final sections so that those stay last.
  story.push(prepared.summary, recall?.section ?? null, lore, prepared.memories, prepared.state);
  story.push(section(tok, 'front_memory', prepared.frontMemory));
  // The length hint goes just above the emit reminder, which keeps the last position. The
  // length budget applies to the narration and the reminder to the block that follows it, so
  // this is also the order in which the model acts. (It never changes mid-story, but moving it
  // up into the cached part would save ~100 tokens a turn at the cost of that order.)
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
  const storyRoles = input.settings.apiMode === 'chat' ? depthRoles(storySections) : [];
  const totalTokens =
    joinedTokens(tok, systemSections, SEPARATOR) + joinedTokens(tok, storySections, SEPARATOR);

  const cache = cacheReport({
    mode,
    blocks,
    historyStart,
    window,
    included,
    spent,
    historyBudget,
    systemTokens: joinedTokens(tok, systemSections, SEPARATOR),
    historySection: storySections[0]?.label === 'history' ? storySections[0] : null,
    totalTokens,
    evicting: included.length < input.totalActions,
    separatorTokens,
  });

  const { settings } = input;
  return {
    system,
    story: storyText,
    ...(storyRoles.length > 0 && { storyRoles }),
    report: {
      sections: [...systemSections, ...storySections].map(({ label, text, tokens }) => ({
        label,
        text,
        tokens,
      })),
      prompt: { system, story: storyText },
      tokens: {
        total: totalTokens,
        budget: settings.contextTokenBudget,
      },
      cards,
      ...(activated.misses.length > 0 ? { cardsNotFired: activated.misses } : {}),
      ...(activated.timedStarts.length > 0 ? { timedLore: activated.timedStarts } : {}),
      // The memories the prompt holds: those past their share of the budget are not reported used.
      memories: input.memories && {
        ...input.memories,
        used: memoriesWithinBudget(input.memories.used, settings.contextTokenBudget, (text) =>
          tok.countCached(text),
        ),
      },
      ...(input.passages && { passages: passageReport(input.passages, recall) }),
      history: {
        included: included.length,
        // The whole story rather than the window that was read: the report says how many of
        // the story's actions it included, so this must be the real total.
        total: input.totalActions,
        oldest_truncated: oldestTruncated,
      },
      cache,
      settings: {
        model: settings.model,
        api_mode: settings.apiMode,
        temperature: settings.temperature,
        max_output_tokens: settings.maxOutputTokens,
      },
    },
  };
}

interface ChosenHistory {
  included: { id: string; text: string; tokens: number }[];
  spent: number;
  oldestTruncated: boolean;
  historyStart: number | null;
}

/** The history window's actions for `historyBudget`, oldest first (see buildContext's notes). */
function chooseHistory(
  window: readonly WindowAction[],
  blocks: StableBlocks | null,
  historyBudget: number,
  separatorTokens: number,
  tok: Tokenizer,
): ChosenHistory {
  const included: ChosenHistory['included'] = [];
  let spent = 0;
  let oldestTruncated = false;
  // `stable`: from the oldest block start whose actions fit, every action to the newest. The
  // start is a function of the path and the budget alone, so a replay rebuilds it, and it moves
  // only when the story has grown by a block past the budget.
  const historyStart = blocks
    ? stableStart(blocks.costs, blocks.before, blocks.blockTokens, historyBudget)
    : null;
  if (historyStart !== null) {
    for (let i = historyStart; i < window.length; i++) {
      included.push({ id: window[i].id, text: window[i].text, tokens: window[i].tokens });
      spent += window[i].tokens + separatorTokens;
    }
  } else {
    // The seed's window (and `stable`'s when no block start fits): newest first until the
    // remaining budget is spent.
    for (let i = window.length - 1; i >= 0; i--) {
      const action = window[i];
      const cost = action.tokens + separatorTokens;
      if (spent + cost > historyBudget) {
        if (included.length === 0) {
          // Even the newest action alone is over budget: keep its end rather than send no story.
          const text = tok.lastTokens(action.text, historyBudget);
          included.push({ id: action.id, text, tokens: tok.count(text) });
          spent = included[0].tokens;
          oldestTruncated = true;
        }
        break;
      }
      included.push({ id: action.id, text: action.text, tokens: action.tokens });
      spent += cost;
    }
    included.reverse();
  }
  return { included, spent, oldestTruncated, historyStart };
}

/** What the prompt says above the recalled passages. */
export const RECALL_HEADER = 'Recalled from earlier in the story:';

interface Recall {
  /** Tokens taken from the history: the passages' share of its budget. */
  budget: number;
  history: ChosenHistory;
  used: RecalledPassage[];
  inHistory: number;
  section: Section;
}

/**
 * The recalled passages this prompt carries, or null when none is: a passage the history
 * already holds is left out (the history at its full budget decides whether anything is
 * recalled at all, the history at its reduced budget which passages are left out), and the rest
 * go in, best fused first, while their share of the history's budget lasts; they are sent in
 * story order. The share is a fixed cut of the budget, not what the passages took, so a
 * `stable` history keeps its start from turn to turn.
 */
function recallPassages(
  input: ContextInput,
  window: readonly WindowAction[],
  full: ChosenHistory,
  fullBudget: number,
  /** The summary's and the memories' tokens: the history pays for them (`storyBudgetSplit`). */
  memoryTokens: number,
  separatorTokens: number,
  tok: Tokenizer,
): Recall | null {
  const candidates = input.passages?.candidates ?? [];
  if (candidates.length === 0) return null;
  const inFull = new Set(full.included.map((action) => action.id));
  if (candidates.every((passage) => inFull.has(passage.actionId))) return null;
  const split = storyBudgetSplit(
    fullBudget,
    memoryTokens,
    input.settings.recallShare ?? RECALL_SHARE,
  );
  const budget = split.recall;
  const blocks = stableBlocks(input, window, separatorTokens);
  const history = chooseHistory(window, blocks, split.history, separatorTokens, tok);
  const inHistory = new Set(history.included.map((action) => action.id));
  const used: RecalledPassage[] = [];
  let spent = tok.countCached(RECALL_HEADER);
  let skipped = 0;
  for (const passage of candidates) {
    if (inHistory.has(passage.actionId)) {
      skipped++;
      continue;
    }
    const cost = passage.tokens + separatorTokens;
    if (spent + cost > budget) continue; // a shorter one further down may still fit
    used.push(passage);
    spent += cost;
  }
  if (used.length === 0) return null;
  used.sort((a, b) => a.position - b.position);
  const parts = [
    { text: RECALL_HEADER, tokens: tok.countCached(RECALL_HEADER) },
    ...used.map(({ text, tokens }) => ({ text, tokens })),
  ];
  return {
    budget,
    history,
    used,
    inHistory: skipped,
    section: {
      label: 'recalled_passages',
      text: parts.map((part) => part.text).join(SEPARATOR),
      tokens: joinedTokens(tok, parts, SEPARATOR),
    },
  };
}

function passageReport(passages: RecalledPassages, recall: Recall | null): PassageReport {
  return {
    used: (recall?.used ?? []).map(({ text: _text, ...cited }) => cited),
    inHistory: recall?.inHistory ?? passages.candidates.length,
    budget: recall?.budget ?? 0,
    tokens: recall?.section.tokens ?? 0,
    ...(passages.error !== undefined && { error: passages.error }),
  };
}

const DEPTH_LABEL = /^lore_depth_(system|user|assistant)$/;

/** Where the depth-placed cards' sections lie in the story text joined from `sections`. */
function depthRoles(sections: readonly Section[]): StoryRole[] {
  const roles: StoryRole[] = [];
  let at = 0;
  for (const s of sections) {
    const role = DEPTH_LABEL.exec(s.label)?.[1] as StoryRole['role'] | undefined;
    if (role) roles.push({ start: at, end: at + s.text.length, role });
    at += s.text.length + SEPARATOR.length;
  }
  return roles;
}

/**
 * The expected cached share of the next request: the next turn repeats this prompt up to the
 * end of its history when it only appends to the story (`stable` between two moves of the
 * start, or any story still shorter than its budget), and only the system block when the
 * window's first action moves (`sliding` once the story outgrows the budget, `stable` when the
 * room left is less than the newest turn's two actions).
 */
function cacheReport(parts: {
  mode: HistoryMode;
  blocks: StableBlocks | null;
  historyStart: number | null;
  window: readonly WindowAction[];
  included: readonly { text: string; tokens: number }[];
  spent: number;
  historyBudget: number;
  systemTokens: number;
  historySection: Section | null;
  totalTokens: number;
  evicting: boolean;
  separatorTokens: number;
}): CacheReport {
  const { blocks, historyStart, window, included } = parts;
  const room = parts.historyBudget - parts.spent;
  const nextTurn = window
    .slice(-2)
    .reduce((sum, action) => sum + action.tokens + parts.separatorTokens, 0);
  const keepsHistory =
    parts.historySection !== null &&
    (historyStart !== null ? room >= nextTurn : !parts.evicting && room >= nextTurn);
  const stablePrefixTokens =
    parts.systemTokens + (keepsHistory ? parts.historySection!.tokens + parts.separatorTokens : 0);
  const expectedCachedTokens = cacheableTokens(stablePrefixTokens);

  // The newest block start inside the history, as a character offset of the story text.
  let breakpoint: number | null = null;
  if (blocks && historyStart !== null) {
    let offset = blocks.before;
    for (let i = 0; i < historyStart; i++) offset += blocks.costs[i];
    let chars = 0;
    for (let i = historyStart, k = 0; i < window.length; i++, k++) {
      const previousBlock = Math.floor(
        (offset - (i > 0 ? blocks.costs[i - 1] : 0)) / blocks.blockTokens,
      );
      if (k > 0 && Math.floor(offset / blocks.blockTokens) > previousBlock) breakpoint = chars;
      chars += included[k].text.length + SEPARATOR.length;
      offset += blocks.costs[i];
    }
  }
  return {
    historyMode: parts.mode,
    blockTokens: blocks?.blockTokens ?? 0,
    blockAligned: historyStart !== null,
    historyFill: parts.historyBudget > 0 ? Math.min(1, parts.spent / parts.historyBudget) : 0,
    stablePrefixTokens,
    expectedCachedTokens,
    expectedCachedShare: parts.totalTokens > 0 ? expectedCachedTokens / parts.totalTokens : 0,
    breakpoint,
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
