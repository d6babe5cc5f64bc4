// The fast projector's state read as the plain `evolve`'s (adventure.evolve.ts): the bucketed
// tree as one record, the narrative state at the head's parent worked out where an undo left it
// unknown, and each script state resolved from its patch chain. Two states that mean the same
// have the same view, so specs compare the fast fold with the contract through it.

import { narrativeAtDepth } from '../adventure.projector';
import { projectionView, type AdventureState } from '../adventure.state';
import type { PlainAdventureState, PlainScriptStates } from '../adventure.evolve';
import { resolveRecord } from '../script-state.store';

export function plainView(state: AdventureState): PlainAdventureState {
  const { scriptStateRecords, narrativeAtParent, ...rest } = projectionView(state);
  const scriptStates: PlainScriptStates = {};
  for (const [actionId, byScript] of Object.entries(state.scriptStates)) {
    scriptStates[actionId] = {};
    for (const [scriptId, recordId] of Object.entries(byScript)) {
      scriptStates[actionId][scriptId] = resolveRecord(scriptStateRecords, recordId);
    }
  }
  return {
    ...rest,
    narrativeAtParent: narrativeAtParent ?? narrativeAtDepth(state, state.path.length - 2),
    scriptStates,
  };
}
