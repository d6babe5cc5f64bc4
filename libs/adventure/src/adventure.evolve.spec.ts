// The projection's contract: given the events so far, when more are folded with `evolve`, then
// the state is this. The histories are played through the real decider (AdventureHistory); the
// fast projector is held to the same meaning by libs/adventure-store's projection.property.spec.ts.

import type { StateEvent } from '@chronicle/narrative';
import {
  evolve,
  initialPlainState,
  plainProject,
  type PlainAdventureState,
} from './adventure.evolve';
import type { RecordedAdventureEvent } from './adventure.events';
import { ProjectionError } from './adventure.projector';
import { AdventureHistory, createAdventureCommand } from './testing/adventure.factory';

const enterMira: StateEvent = {
  type: 'enter',
  id: 'mira',
  name: 'Mira',
  kind: 'character',
  status: 'alive',
};
const tired: StateEvent = { type: 'status', id: 'mira', to: 'tired' };

function deepFreeze<T>(value: T): T {
  if (value !== null && typeof value === 'object' && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const child of Object.values(value)) deepFreeze(child);
  }
  return value;
}

/** Given `history` so far, when `act` runs on it, then its new events fold to a state. */
function given(history: AdventureHistory) {
  return {
    when(act: (history: AdventureHistory) => void) {
      const mark = history.events.length;
      // Frozen: evolve never changes the state (or the events) it is handed.
      const before = deepFreeze(plainProject(history.events));
      act(history);
      const events = deepFreeze(history.events.slice(mark));
      const after = events.reduce(evolve, before);
      return {
        then(check: (state: PlainAdventureState, before: PlainAdventureState) => void): void {
          check(after, before);
        },
      };
    },
  };
}

const pathIds = (state: PlainAdventureState) => state.path.map((entry) => entry.id);

describe('evolve, the projection contract', () => {
  it('given nothing, when the adventure is created, then its opening is the head and the whole path', () => {
    given(new AdventureHistory())
      .when((h) => h.run(createAdventureCommand()))
      .then((state) => {
        expect(state.version).toBe(1);
        expect(state.head).toBe('opening');
        expect(state.nodes.opening).toMatchObject({ parentId: null, depth: 0, type: 'start' });
        expect(pathIds(state)).toEqual(['opening']);
        expect(state.cards.map((card) => card.id)).toEqual(['card-mira']);
        expect(state.narrative).toEqual({ entities: {}, facts: [] });
      });
  });

  it('given an adventure, when the player acts, then the action is a child of the head, the head, and its turn is in flight', () => {
    given(AdventureHistory.create())
      .when((h) => h.act('do', 'walk north', { turnId: 't1', actionId: 'a1' }))
      .then((state) => {
        expect(state.nodes.a1).toMatchObject({ parentId: 'opening', depth: 1, type: 'do' });
        expect(pathIds(state)).toEqual(['opening', 'a1']);
        expect(state.inFlight).toMatchObject({ turnId: 't1', kind: 'action', actionId: 'a1' });
      });
  });

  it('given a turn in flight, when it is narrated, then the narration is the head, its state events fold in, the turn ends', () => {
    const history = AdventureHistory.create();
    const { turnId } = history.act('do', 'walk north');
    given(history)
      .when((h) => h.narrate({ actionId: 'n1', reported: [enterMira] }))
      .then((state) => {
        expect(state.head).toBe('n1');
        expect(state.narrative.entities.mira).toMatchObject({ status: 'alive' });
        expect(state.narrativeAtParent).toEqual({ entities: {}, facts: [] });
        expect(state.inFlight).toBeNull();
        expect(state.recentTurns.at(-1)).toEqual({
          turnId,
          status: 'done',
          actionId: 'n1',
          error: null,
          code: null,
        });
      });
  });

  it('given a narrated turn, when it is retried, then the new take goes beside the old one and the state starts again from their parent', () => {
    const history = AdventureHistory.create();
    const first = history.turn('do', 'walk', { reported: [enterMira] });
    given(history)
      .when((h) => {
        h.requestRetry();
        h.narrate({ actionId: 'take-2', reported: [] });
      })
      .then((state) => {
        expect(state.nodes['take-2'].parentId).toBe(first.playerActionId);
        expect(state.nodes[first.aiActionId]).toBeDefined();
        expect(pathIds(state)).toEqual(['opening', first.playerActionId, 'take-2']);
        expect(state.narrative.entities).toEqual({});
      });
  });

  it('given two turns, when one is undone, then the head is back before it, redo remembers it, and the state follows', () => {
    const history = AdventureHistory.create();
    const first = history.turn('do', 'walk', { reported: [enterMira] });
    const second = history.turn('do', 'rest', { reported: [tired] });
    given(history)
      .when((h) => h.undo())
      .then((state) => {
        expect(state.head).toBe(first.aiActionId);
        expect(state.redo).toEqual([second.aiActionId]);
        expect(state.narrative.entities.mira.status).toBe('alive');
      });
  });

  it('given a narration with state events, when one is retconned, then the state is folded without it', () => {
    const history = AdventureHistory.create();
    const { aiActionId } = history.turn('do', 'walk', { reported: [enterMira, tired] });
    given(history)
      .when((h) => h.retcon(aiActionId, 1))
      .then((state) => {
        expect(state.nodes[aiActionId].retconned).toEqual([1]);
        expect(state.narrative.entities.mira.status).toBe('alive');
      });
  });

  it('given a narration, when it is erased, then it stays on the path flagged and its state events leave the state', () => {
    const history = AdventureHistory.create();
    const { aiActionId } = history.turn('do', 'walk', { reported: [enterMira] });
    history.turn('do', 'rest');
    given(history)
      .when((h) => h.erase(aiActionId))
      .then((state) => {
        expect(state.path.find((entry) => entry.id === aiActionId)?.erased).toBe(true);
        expect(state.narrative.entities).toEqual({});
      });
  });

  it('given an action, when it is edited, then its text is at the edit version, and a memory written from it is withdrawn', () => {
    const history = AdventureHistory.create();
    const { playerActionId } = history.turn('do', 'walk');
    history.append({
      type: 'MemoryWritten',
      data: {
        memoryId: 'm1',
        text: 'They walked.',
        sourceStart: 1,
        sourceEnd: 2,
        anchorActionId: history.head,
        sourceActionIds: [playerActionId ?? '', history.head],
        createdBy: 'worker',
      },
    });
    given(history)
      .when((h) => h.edit(playerActionId ?? '', 'run'))
      .then((state) => {
        expect(state.nodes[playerActionId ?? ''].textVersion).toBe(state.version);
        expect(state.memory.memories[0].withdrawn).toBe(true);
        expect(state.memory.memoryCursor).toBe('opening');
      });
  });

  it('given a turn, when the player corrects the state, then the correction is kept on the head and folded in', () => {
    const history = AdventureHistory.create();
    const { aiActionId } = history.turn('do', 'walk', { reported: [enterMira] });
    given(history)
      .when((h) => h.correct({ op: 'setStatus', id: 'mira', status: 'wounded' }))
      .then((state) => {
        expect(state.nodes[aiActionId].corrections).toHaveLength(1);
        expect(state.narrative.entities.mira.status).toBe('wounded');
      });
  });

  it('given a turn in flight, when a script stops it, then the turn is no longer in flight and its outcome says stopped', () => {
    const history = AdventureHistory.create();
    const { turnId } = history.act('do', 'walk');
    given(history)
      .when((h) =>
        h.run({
          type: 'StopTurnByScript',
          data: {
            turnId,
            scriptId: 'guard',
            message: 'not now',
            effects: { runs: [], states: {}, cardOps: [], messages: [] },
          },
        }),
      )
      .then((state) => {
        expect(state.inFlight).toBeNull();
        expect(state.recentTurns.at(-1)).toMatchObject({
          turnId,
          status: 'stopped',
          error: 'not now',
        });
      });
  });

  it('given a script, when it records a state on a node, then the whole state is kept on that node', () => {
    const history = AdventureHistory.create({ scripts: [{ id: 'counter', name: 'Counter' }] });
    history.turn('do', 'walk');
    const node = history.head;
    given(history)
      .when((h) =>
        h.append({
          type: 'ScriptStateChanged',
          data: { scriptId: 'counter', actionId: node, state: { count: 2 } },
        }),
      )
      .then((state) => {
        expect(state.scriptStates[node]).toEqual({ counter: { count: 2 } });
      });
  });

  it('given a card a script added with a turn, when the turn is undone, then the card is parked until redo', () => {
    const history = AdventureHistory.create();
    history.turn('do', 'climb');
    history.append({
      type: 'StoryCardAdded',
      data: {
        card: {
          id: 'vex',
          name: 'Vex',
          keys: 'vex',
          entry: 'Vex guards the lamp.',
          type: 'character',
          notes: '',
        },
        source: { scriptId: 'auto', hook: 'output', turnId: 't' },
      },
    });
    given(history)
      .when((h) => h.undo())
      .then((state, before) => {
        expect(before.cards.map((card) => card.id)).toContain('vex');
        expect(state.cards.map((card) => card.id)).not.toContain('vex');
        expect(state.parkedCards.map((card) => card.id)).toEqual(['vex']);
      });
  });

  it('refuses events out of order, and event types it does not know', () => {
    const { events } = AdventureHistory.create();
    expect(() => evolve(initialPlainState(), { ...events[0], version: 2 })).toThrow(
      ProjectionError,
    );
    const mystery = { type: 'Mystery', data: {}, version: 2 } as unknown as RecordedAdventureEvent;
    expect(() => evolve(plainProject(events), mystery)).toThrow(/unknown event type "Mystery"/);
  });
});
