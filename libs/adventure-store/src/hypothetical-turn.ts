import {
  projectFrom,
  recordedAfter,
  type AdventureState,
  type InputType,
} from '@chronicle/adventure';
import { decideCommand } from './adventure.decide';
import { deterministicEventId } from './adventure.command-handler';
import type { ActionTextReader } from './turn-context';

// A dry run of a player's action: the projection and the texts the next turn would read if the
// action were sent now, and nothing written. The action goes through the decider exactly as a
// real one does (its type, length and formatting rules, a turn already in flight), so the
// prompt built on it is the one the real action would get, or the refusal is the real one.

/** The action a dry run supposes, as the player would send it. */
export interface HypotheticalInput {
  type: InputType;
  text?: string;
}

export interface HypotheticalTurn {
  /** The projection just after the action, its turn in flight: what the context worker reads. */
  state: AdventureState;
  /** The story's texts, the supposed action's included (it is in no event of the log). */
  texts: ActionTextReader;
  /** The supposed action's id on the path (null for continue, which writes no action). */
  actionId: string | null;
}

/**
 * The turn `input` would start on `state`. Its ids derive from the adventure and its version, so
 * the same dry run on the same story draws the same lore macros; no onInput script runs (a dry
 * run has no side effects to record, and the preview never ran the turn's scripts).
 */
export function hypotheticalTurn(
  store: ActionTextReader,
  state: AdventureState,
  input: HypotheticalInput,
): HypotheticalTurn {
  const seed = `${state.id ?? ''}\u0000${state.version}`;
  const turnId = deterministicEventId('dry-run turn', seed);
  const actionId = deterministicEventId('dry-run action', seed);
  const decided = decideCommand(
    {
      type: 'SubmitAction',
      data: { turnId, inputType: input.type, text: input.text ?? '', actionId },
    },
    state,
  );
  const recorded = recordedAfter(state, decided);
  const after = projectFrom(state, recorded);
  const acted = recorded.find((event) => event.type === 'PlayerActed');
  const action = acted?.type === 'PlayerActed' ? acted.data.action : null;
  if (!action) return { state: after, texts: store, actionId: null };
  return {
    state: after,
    actionId: action.id,
    texts: {
      readActionTexts: async (adventureId, entries) => {
        const stored = entries.filter((entry) => entry.id !== action.id);
        const texts = stored.length > 0 ? await store.readActionTexts(adventureId, stored) : [];
        let next = 0;
        return entries.map((entry) => (entry.id === action.id ? action.text : texts[next++]));
      },
    },
  };
}
