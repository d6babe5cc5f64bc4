// The seed's `build_context`, transcribed as literally as TypeScript allows and with every
// count re-encoded (no cached token counts, no memo, the trigger window encoded whole). It is
// the yardstick for two things: the equivalence spec (the fast builder must send the same
// prompt) and the benchmark's naive path. Not for production use.
import {
  EMIT_REMINDER,
  EMIT_RULE,
  renderCanon,
  renderForPrompt,
  renderRejections,
} from '@chronicle/narrative';
import type {
  BuiltContext,
  ContextHead,
  ContextReport,
  ReportSection,
  WindowAction,
} from '../context.types';
import { isStoryText, WINDOW_MARGIN, WINDOW_START, WINDOW_STEP } from '../history.window';
import { lengthHint } from '../length-hint';
import { renderPersona, renderPlayers } from '../persona.render';
import { matchCards } from '../story-cards.match';
import { tokenizer } from '../tokenizer';

const SEPARATOR = '\n\n';

/** The seed's output: its report has no `cache` part (Chronicle's own figures). */
export type SeedBuiltContext = Omit<BuiltContext, 'report'> & {
  report: Omit<ContextReport, 'cache'>;
};

export function seedReferenceContext(
  head: ContextHead,
  path: readonly WindowAction[],
): SeedBuiltContext {
  const tok = tokenizer(head.settings.encoding ?? 'cl100k_base');
  const count = (text: string) => tok.count(text);
  const truncate = (text: string, budget: number) => tok.lastTokens(text, budget);
  const section = (label: string, text: string): ReportSection => ({
    label,
    text,
    tokens: count(text),
  });
  const story = path.filter((a) => isStoryText(a.text) && a.id !== head.excludeActionId);
  const memory = head.scriptMemory ?? {};
  const str = (key: string) => (typeof memory[key] === 'string' ? (memory[key] as string) : null);

  const system: ReportSection[] = [section('narrator', head.settings.narratorPrompt.trim())];
  system.push(section('state_rule', EMIT_RULE));
  const canon = renderCanon(head.canon);
  if (canon) system.push(section('campaign_canon', canon));
  if (str('context')?.trim()) system.push(section('script_context', str('context')!.trim()));
  if (head.aiInstructions.trim())
    system.push(section('ai_instructions', head.aiInstructions.trim()));
  const players = head.players?.length ? renderPlayers(head.players) : '';
  const persona = renderPersona(head.persona);
  if (players) system.push(section('players', players));
  else if (persona) system.push(section('persona', persona));
  if (head.plotEssentials.trim()) {
    system.push(section('plot_essentials', `Plot essentials:\n${head.plotEssentials.trim()}`));
  }

  const summary = head.storySummary.trim()
    ? section('story_summary', `Story summary:\n${head.storySummary.trim()}`)
    : null;
  const used = head.memories?.used ?? [];
  const memories = used.length
    ? section('used_memories', `Memories:\n${used.map((m) => `- ${m.text}`).join('\n')}`)
    : null;
  const stateBlock = head.narrativeState ? renderForPrompt(head.narrativeState) : '';
  const worldState = stateBlock ? section('narrative_state', stateBlock) : null;
  const recent = story.slice(-6);
  const lastAi = [...recent].reverse().find((a) => a.type === 'ai');
  const refusalNote = lastAi ? renderRejections(lastAi.rejections ?? []) : '';
  let authorsNoteText = head.authorsNote.trim();
  if (str('authorsNote')?.trim()) authorsNoteText = str('authorsNote')!.trim();
  const authorsNote = authorsNoteText ? `[Author's note: ${authorsNoteText}]` : '';
  const frontMemory = (str('frontMemory') ?? '').trim();
  const lengthNote = lengthHint(head.settings.maxOutputTokens);

  const reserved =
    system.reduce((s, x) => s + x.tokens, 0) +
    [summary, memories, worldState].reduce((s, x) => s + (x?.tokens ?? 0), 0) +
    count(authorsNote) +
    count(frontMemory) +
    count(lengthNote) +
    count(EMIT_REMINDER) +
    count(refusalNote);
  const available = Math.max(256, head.settings.contextTokenBudget - reserved);

  // history.window_covering: each round reads only older rows and encodes them to count them
  let size = WINDOW_START;
  let actions: WindowAction[] = [];
  let total = 0;
  for (;;) {
    const older = story.slice(Math.max(0, story.length - size), story.length - actions.length);
    total += older.reduce((s, a) => s + count(a.text), 0);
    actions = [...older, ...actions];
    if (total > available || actions.length === story.length) break;
    const average = total / actions.length;
    size = Math.max(
      size + WINDOW_STEP,
      Math.floor((available / average) * (1 + WINDOW_MARGIN)) + WINDOW_STEP,
    );
  }

  const triggerWindow = truncate(actions.map((a) => a.text).join(SEPARATOR), available);
  const cardBudget = Math.floor(available * 0.4);
  const cards = [];
  const loreLines: string[] = [];
  let loreUsed = 0;
  for (const match of matchCards(head.storyCards, triggerWindow)) {
    const line = `World Lore: ${match.entry.trim()}`;
    const tokens = count(line);
    const included = loreUsed + tokens <= cardBudget;
    if (included) {
      loreLines.push(line);
      loreUsed += tokens;
    }
    cards.push({ id: match.id, name: match.name, keyword: match.keyword, included });
  }
  const lore = loreLines.length ? section('world_lore', loreLines.join('\n')) : null;

  const historyBudget = available - loreUsed;
  const included: string[] = [];
  let spent = 0;
  let oldestTruncated = false;
  for (const action of [...actions].reverse()) {
    const tokens = count(action.text) + count(SEPARATOR);
    if (spent + tokens > historyBudget) {
      if (included.length === 0) {
        included.push(truncate(action.text, historyBudget));
        oldestTruncated = true;
      }
      break;
    }
    included.push(action.text);
    spent += tokens;
  }
  included.reverse();

  const notes: ReportSection[] = [];
  if (authorsNote) {
    const pos = Math.max(0, included.length - 3);
    if (pos > 0) notes.push(section('history', included.slice(0, pos).join(SEPARATOR)));
    notes.push(section('authors_note', authorsNote));
    notes.push(section('recent_history', included.slice(pos).join(SEPARATOR)));
  } else {
    notes.push(section('history', included.join(SEPARATOR)));
  }
  for (const live of [summary, lore, memories, worldState]) if (live) notes.push(live);
  if (frontMemory) notes.push(section('front_memory', frontMemory));
  notes.push(section('length_hint', lengthNote));
  if (refusalNote) notes.push(section('state_refusals', refusalNote));
  notes.push(section('state_reminder', EMIT_REMINDER));

  const storySections = notes.filter((s) => s.text);
  const systemText = system
    .filter((s) => s.text)
    .map((s) => s.text)
    .join(SEPARATOR);
  const storyText = storySections.map((s) => s.text).join(SEPARATOR);
  return {
    system: systemText,
    story: storyText,
    report: {
      sections: [...system.filter((s) => s.text), ...storySections],
      prompt: { system: systemText, story: storyText },
      tokens: {
        total: count(systemText) + count(storyText),
        budget: head.settings.contextTokenBudget,
      },
      cards,
      memories: head.memories,
      history: {
        included: included.length,
        total: story.length,
        oldest_truncated: oldestTruncated,
      },
      settings: {
        model: head.settings.model,
        api_mode: head.settings.apiMode,
        temperature: head.settings.temperature,
        max_output_tokens: head.settings.maxOutputTokens,
      },
    },
  };
}
