// What a script hook is shown of an adventure at its head (docs/scripting.md §1.3, §3.4): the
// last 100 actions of the head's path as AID's `history`, `info.actionCount`, the story cards in
// AID's shape, Plot Essentials as `memory`, and each script's private state at the head.
import {
  excludedActionId,
  roomCharacters,
  scriptStateAtHead,
  storyActionCount,
  storyPath,
  type AdventureState,
  type NodeType,
  type ScriptRecord,
  type StoryCard,
} from '@chronicle/adventure';
import {
  SCRIPT_LIMITS,
  type HistoryEntry,
  type HistoryType,
  type SandboxCard,
  type ScriptDefinition,
} from '@chronicle/scripting';
import type { ActionTextReader } from './turn-context';

const HISTORY_TYPES: Record<NodeType, HistoryType> = {
  start: 'start',
  do: 'do',
  say: 'say',
  story: 'story',
  ai: 'continue',
};

export interface ScriptHookBase {
  owner: string;
  scripts: ScriptDefinition[];
  states: Record<string, Record<string, unknown>>;
  cards: SandboxCard[];
  history: HistoryEntry[];
  actionCount: number;
  characterNames: string[];
  /** In a room: the active players' characters (info.characters); absent for one player. */
  characters?: { name: string }[];
  memory: { context: string; authorsNote: string };
}

export function scriptDefinitions(scripts: readonly ScriptRecord[]): ScriptDefinition[] {
  return scripts.map((script, index) => ({ ...script, position: index + 1 }));
}

export function sandboxCard(card: StoryCard): SandboxCard {
  return {
    id: card.id,
    title: card.name,
    keys: card.keys,
    type: card.type,
    entry: card.entry,
    description: card.notes,
  };
}

/** The hook inputs at the head, or null when no enabled script has any hook. */
export async function scriptHookBase(
  store: ActionTextReader,
  state: AdventureState,
): Promise<ScriptHookBase | null> {
  const scripts = scriptDefinitions(state.scripts).filter((s) => s.enabled);
  if (scripts.length === 0) return null;
  const path = storyPath(state);
  const window = path.slice(-SCRIPT_LIMITS.historyActions);
  const texts = window.length > 0 ? await store.readActionTexts(state.id ?? '', window) : [];
  const exclude = excludedActionId(state);
  const states: Record<string, Record<string, unknown>> = {};
  for (const script of scripts) states[script.id] = scriptStateAtHead(state, script.id, exclude);
  const persona = state.fields.persona.name.trim();
  const characters = roomCharacters(state)?.map(({ name }) => ({ name: name.trim() }));
  return {
    owner: state.ownerId ?? '',
    scripts,
    states,
    cards: state.cards.map(sandboxCard),
    history: window.map((entry, i) => ({ text: texts[i], type: HISTORY_TYPES[entry.type] })),
    actionCount: storyActionCount(state),
    characterNames: characters ? characters.map(({ name }) => name) : persona ? [persona] : [],
    ...(characters && { characters }),
    memory: { context: state.fields.plotEssentials, authorsNote: state.fields.authorsNote },
  };
}
