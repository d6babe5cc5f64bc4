// The fast projector's own behaviour, through the queries that read it: what it shares between
// folds, what it costs, and reads of the story. What each event means is specified against the
// plain `evolve` (adventure.evolve.spec.ts), and a property spec holds this fold to it
// (libs/adventure-store's projection.property.spec.ts).

import type { StateEvent } from '@chronicle/narrative';
import { ProjectionError, project, projectFrom } from './adventure.projector';
import {
  canonicalJson,
  lastAiRejections,
  narrativeForTurn,
  storyActionCount,
  storyPath,
  turnStatus,
} from './adventure.queries';
import { nodeBucket, nodeOf, requireNode, type AdventureState } from './adventure.state';
import { AdventureHistory, playedAdventure } from './testing/adventure.factory';

const enterHarbor: StateEvent = { type: 'enter', id: 'harbor', name: 'Harbor', kind: 'place' };
const enterMira: StateEvent = {
  type: 'enter',
  id: 'mira',
  name: 'Mira',
  kind: 'character',
  status: 'alive',
  at: 'harbor',
};
const fact = (text: string): StateEvent => ({ type: 'fact', text });

const ids = (state: AdventureState) => storyPath(state).map((entry) => entry.id);
const entityIds = (state: AdventureState) => Object.keys(state.narrative.entities).sort();
const facts = (state: AdventureState) => state.narrative.facts.map((f) => f.text);

describe('adventure projector', () => {
  it('creates the opening at depth 0 as the head, its text at version 1', () => {
    const { state } = AdventureHistory.create();
    expect(state.head).toBe('opening');
    expect(state.path).toEqual([
      { id: 'opening', type: 'start', tokens: 8, textVersion: 1, turnId: null, erased: false },
    ]);
    expect(state.cards.map((card) => card.id)).toEqual(['card-mira']);
    expect(state.settings.encoding).toBe('cl100k_base');
  });

  it('appends a turn below the head and folds its accepted events', () => {
    const history = AdventureHistory.create();
    const { turnId, playerActionId, aiActionId } = history.turn('do', 'walk north', {
      reported: [enterHarbor, enterMira, '{"type":"x"}'],
      manifest: { sections: ['history'] },
    });
    const { state } = history;
    expect(ids(state)).toEqual(['opening', playerActionId, aiActionId]);
    expect(requireNode(state, aiActionId)).toMatchObject({
      parentId: playerActionId,
      depth: 2,
      type: 'ai',
    });
    expect(state.path[2].textVersion).toBe(3);
    expect(entityIds(state)).toEqual(['harbor', 'mira']);
    expect(state.inFlight).toBeNull();
    expect(turnStatus(state, turnId)).toEqual({ status: 'done', actionId: aiActionId });
    expect(state.lastContext).toEqual({
      turnId,
      actionId: aiActionId,
      version: 3,
      manifest: { sections: ['history'] },
    });
    expect(lastAiRejections(state)).toEqual([
      expect.objectContaining({ line: '{"type":"x"}', reason: 'unknown type "x"' }),
    ]);
  });

  it('keeps the turn in flight until it is narrated, and reports failures and cancellations', () => {
    const history = AdventureHistory.create();
    const { turnId, actionId } = history.act('do', 'walk north');
    expect(history.state.inFlight).toEqual({
      turnId,
      kind: 'action',
      actionId,
      actionIds: [actionId],
      replacesActionId: null,
      requestedAtVersion: 2,
      playerEvents: [],
    });
    expect(turnStatus(history.state, turnId)).toEqual({ status: 'queued', actionId });
    history.fail('model unreachable');
    expect(turnStatus(history.state, turnId)).toEqual({
      status: 'failed',
      error: 'model unreachable',
      code: 'model_unreachable',
    });
    const second = history.act('continue');
    expect(history.state.inFlight?.kind).toBe('continue');
    history.cancel();
    expect(turnStatus(history.state, second.turnId)).toEqual({ status: 'cancelled' });
    expect(turnStatus(history.state, 'unknown')).toBeNull();
  });

  describe('retry', () => {
    it('excludes the replaced take while in flight and rolls the state back', () => {
      const history = AdventureHistory.create();
      const first = history.turn('do', 'walk north', { reported: [enterHarbor] });
      const second = history.turn('do', 'wait', {
        reported: [fact('The bell rang'), 'x'],
      });
      history.requestRetry();
      const { state } = history;
      expect(state.inFlight?.replacesActionId).toBe(second.aiActionId);
      expect(ids(state)).not.toContain(second.aiActionId);
      expect(storyActionCount(state)).toBe(4);
      expect(ids(state).at(-1)).toBe(second.playerActionId);
      expect(storyPath(state, { includeReplaced: true }).at(-1)?.id).toBe(second.aiActionId);
      // The refusal lookup skips the replaced take: the note is the previous AI turn's.
      expect(lastAiRejections(state)).toEqual([]);
      expect(narrativeForTurn(state).facts).toEqual([]);
      expect(Object.keys(narrativeForTurn(state).entities)).toEqual(['harbor']);
      expect(first.aiActionId).toBe(ids(state)[2]);
    });

    it('writes the new take as a sibling, moves the head to it, keeps the old take', () => {
      const history = AdventureHistory.create();
      const turn = history.turn('do', 'walk north', { reported: [fact('Old take')] });
      const take = history.retry({ reported: [fact('New take')] });
      const { state } = history;
      expect(requireNode(state, take).parentId).toBe(turn.playerActionId);
      expect(requireNode(state, take).depth).toBe(requireNode(state, turn.aiActionId).depth);
      expect(requireNode(state, turn.aiActionId).erased).toBe(false);
      expect(ids(state)).toEqual(['opening', turn.playerActionId, take]);
      expect(facts(state)).toEqual(['New take']);
    });

    it('a failed retry brings the old take back into the story', () => {
      const history = AdventureHistory.create();
      const turn = history.turn('do', 'walk north', { reported: [fact('Old take')] });
      history.requestRetry();
      history.fail();
      expect(ids(history.state).at(-1)).toBe(turn.aiActionId);
      expect(narrativeForTurn(history.state).facts).toEqual([{ text: 'Old take' }]);
    });
  });

  describe('undo and redo', () => {
    it('moves the head back before the last turn and forward again; state follows', () => {
      const history = AdventureHistory.create();
      const first = history.turn('do', 'walk north', { reported: [enterHarbor] });
      const second = history.turn('do', 'wait', { reported: [fact('The bell rang')] });
      history.undo();
      expect(history.head).toBe(first.aiActionId);
      expect(ids(history.state)).toEqual(['opening', first.playerActionId, first.aiActionId]);
      expect(facts(history.state)).toEqual([]);
      expect(history.state.redo).toEqual([second.aiActionId]);
      history.undo();
      expect(history.head).toBe('opening');
      expect(entityIds(history.state)).toEqual([]);
      history.redo();
      expect(history.head).toBe(first.aiActionId);
      history.redo();
      expect(history.head).toBe(second.aiActionId);
      expect(facts(history.state)).toEqual(['The bell rang']);
      expect(history.state.redo).toEqual([]);
    });

    it('a new action clears redo, and branches below the undone point', () => {
      const history = AdventureHistory.create();
      const first = history.turn('do', 'walk north');
      const undone = history.turn('do', 'wait');
      history.undo();
      const fork = history.turn('say', 'hello');
      expect(history.state.redo).toEqual([]);
      expect(requireNode(history.state, fork.playerActionId ?? '').parentId).toBe(first.aiActionId);
      expect(requireNode(history.state, undone.aiActionId).erased).toBe(false);
      expect(() => history.redo()).toThrow(/nothing to redo/);
    });
  });

  describe('branches and takes', () => {
    it('acting below a non-live take forks a branch; switching back restores its state', () => {
      const history = AdventureHistory.create();
      const turn = history.turn('do', 'walk north', { reported: [fact('Take one')] });
      const later = history.turn('do', 'wait', { reported: [fact('Later on take one')] });
      history.undo();
      const takeTwo = history.retry({ reported: [fact('Take two')] });
      expect(facts(history.state)).toEqual(['Take two']);

      history.moveHead(turn.aiActionId);
      expect(facts(history.state)).toEqual(['Take one']);
      const branch = history.turn('story', 'A gull cries.', { reported: [fact('Branch')] });
      expect(requireNode(history.state, branch.playerActionId ?? '').parentId).toBe(
        turn.aiActionId,
      );
      expect(ids(history.state)).toEqual([
        'opening',
        turn.playerActionId,
        turn.aiActionId,
        branch.playerActionId,
        branch.aiActionId,
      ]);
      expect(facts(history.state)).toEqual(['Take one', 'Branch']);

      history.moveHead(later.aiActionId);
      expect(facts(history.state)).toEqual(['Take one', 'Later on take one']);
      history.moveHead(takeTwo);
      expect(facts(history.state)).toEqual(['Take two']);
    });
  });

  describe('edit and erase', () => {
    it('an edit moves the text version and the token count, in the node and on the path', () => {
      const history = AdventureHistory.create();
      const { aiActionId } = history.turn('do', 'walk north');
      history.edit(aiActionId, 'The fog lifts at last.');
      const { state } = history;
      expect(requireNode(state, aiActionId)).toMatchObject({ tokens: 5, textVersion: 4 });
      expect(state.path.at(-1)).toMatchObject({ id: aiActionId, tokens: 5, textVersion: 4 });
    });

    it('an erased action leaves every read of the story, and its events the state', () => {
      const history = AdventureHistory.create();
      const first = history.turn('do', 'walk north', { reported: [enterHarbor] });
      const second = history.turn('do', 'wait', {
        reported: [fact('The bell rang'), 'x'],
      });
      history.erase(first.aiActionId);
      expect(ids(history.state)).toEqual([
        'opening',
        first.playerActionId,
        second.playerActionId,
        second.aiActionId,
      ]);
      expect(entityIds(history.state)).toEqual([]);
      expect(facts(history.state)).toEqual(['The bell rang']);
      history.erase(second.aiActionId);
      expect(lastAiRejections(history.state)).toEqual([]);
      expect(facts(history.state)).toEqual([]);
      // Undo works on what the story shows: the player action left at the end.
      history.undo();
      expect(ids(history.state)).toEqual(['opening', first.playerActionId]);
    });
  });

  describe('corrections and retcons', () => {
    it('a correction shows in the state at once and survives the next turn', () => {
      const history = AdventureHistory.create();
      history.turn('do', 'walk north', { reported: [enterHarbor, enterMira] });
      history.correct({ op: 'setStatus', id: 'mira', status: 'wounded' });
      expect(history.state.narrative.entities.mira.status).toBe('wounded');
      history.turn('do', 'wait', { reported: [fact('Night falls')] });
      expect(history.state.narrative.entities.mira.status).toBe('wounded');
      expect(facts(history.state)).toEqual(['Night falls']);
      // Undo past the correction's anchor removes it with its turn; redo brings it back.
      history.undo();
      history.undo();
      expect(history.state.narrative.entities).toEqual({});
      history.redo();
      expect(history.state.narrative.entities.mira.status).toBe('wounded');
    });

    it('a correction anchored below the head is folded in its place', () => {
      const history = AdventureHistory.create();
      const first = history.turn('do', 'walk north', { reported: [enterHarbor, enterMira] });
      history.turn('do', 'wait', { reported: [{ type: 'status', id: 'mira', to: 'asleep' }] });
      history.correct({ op: 'rename', id: 'mira', name: 'Old Mira' }, first.aiActionId);
      expect(history.state.narrative.entities.mira).toMatchObject({
        name: 'Old Mira',
        status: 'asleep',
      });
    });

    it('a retcon recomputes the state without the withdrawn event', () => {
      const history = AdventureHistory.create();
      const first = history.turn('do', 'walk north', { reported: [enterHarbor, enterMira] });
      history.turn('do', 'wait', { reported: [fact('Night falls')] });
      history.retcon(first.aiActionId, 1);
      expect(entityIds(history.state)).toEqual(['harbor']);
      expect(facts(history.state)).toEqual(['Night falls']);
      expect(requireNode(history.state, first.aiActionId).retconned).toEqual([1]);
    });
  });

  describe('replay', () => {
    function busyHistory(): AdventureHistory {
      const history = playedAdventure(24, 200);
      const undone = history.turn('do', 'dig', { reported: [fact('A hole')] });
      history.undo();
      history.turn('say', 'no digging');
      history.moveHead(undone.aiActionId);
      history.correct({ op: 'addFact', text: 'The player chose this' });
      history.erase(undone.playerActionId ?? '');
      history.edit(undone.aiActionId, 'You dig a shallow hole.');
      history.run({
        type: 'EditAdventure',
        data: { authorsNote: 'Darker now.', settings: { memoryTopK: 7 } },
      });
      history.run({ type: 'RemoveStoryCard', data: { cardId: 'card-mira' } });
      history.act('do', 'rest');
      history.fail();
      return history;
    }

    it('folds deterministically: the live state equals a replay, byte for byte', () => {
      const history = busyHistory();
      const replayed = project(history.events);
      expect(JSON.stringify(replayed)).toBe(JSON.stringify(history.state));
      expect(JSON.stringify(project(history.events))).toBe(JSON.stringify(replayed));
    });

    it('projectFrom a JSON snapshot at any version equals the full fold', () => {
      const history = busyHistory();
      const full = canonicalJson(project(history.events));
      for (const at of [1, 7, 30, history.events.length - 3]) {
        const snapshot = JSON.parse(JSON.stringify(project(history.events.slice(0, at))));
        const resumed = projectFrom(snapshot, history.events.slice(at));
        expect(canonicalJson(resumed)).toBe(full);
      }
    });

    it('holds no undefined anywhere, so a JSON round trip changes nothing', () => {
      const state = busyHistory().state;
      expect(JSON.parse(JSON.stringify(state))).toEqual(state);
      const undefinedPaths: string[] = [];
      walk(state, '', (path, value) => value === undefined && undefinedPaths.push(path));
      expect(undefinedPaths).toEqual([]);
    });

    it('a fold onto a long story copies only the buckets of the tree it writes', () => {
      const history = playedAdventure(400, 20);
      const before = project(history.events);
      const turn = history.turn('do', 'look back');
      const after = projectFrom(before, history.events.slice(before.version));
      const written = new Set(
        [turn.playerActionId ?? '', turn.aiActionId].map((id) => nodeBucket(id)),
      );
      after.nodes.forEach((bucket, index) => {
        if (written.has(index)) expect(bucket).not.toBe(before.nodes[index]);
        else expect(bucket).toBe(before.nodes[index]);
      });
      expect(nodeOf(before, turn.aiActionId)).toBeUndefined();
      expect(nodeOf(after, turn.aiActionId)?.parentId).toBe(turn.playerActionId);
      // the ids spread over the buckets
      expect(Math.min(...before.nodes.map((bucket) => Object.keys(bucket).length))).toBeGreaterThan(
        0,
      );
    });

    it('a fold keeps the card list while no card event comes, and a card event copies it', () => {
      const history = playedAdventure(3, 20);
      const before = project(history.events);
      history.turn('do', 'look back');
      const after = projectFrom(before, history.events.slice(before.version));
      // the same array: the prompt's lore finds its compiled book by it
      expect(after.cards).toBe(before.cards);
      const kept = before.cards.slice();
      history.run({ type: 'RemoveStoryCard', data: { cardId: 'card-mira' } });
      const removed = projectFrom(after, history.events.slice(after.version));
      expect(removed.cards).not.toBe(after.cards);
      expect(removed.cards.map((card) => card.id)).not.toContain('card-mira');
      expect(after.cards).toEqual(kept);
    });

    it('a fold leaves its input untouched (deep-frozen input, same result as the whole fold)', () => {
      const history = busyHistory();
      const events = history.events;
      let state = project(events.slice(0, 20));
      for (const event of events.slice(20)) {
        const frozen = deepFreeze(JSON.parse(JSON.stringify(state)) as AdventureState);
        const before = JSON.stringify(frozen);
        state = projectFrom(frozen, [event]);
        expect(JSON.stringify(frozen)).toBe(before);
      }
      expect(canonicalJson(state)).toBe(canonicalJson(history.state));
    });

    it('refuses events out of order or with gaps, and unknown types', () => {
      const { events } = playedAdventure(1);
      expect(() => project([events[0], events[2]])).toThrow(ProjectionError);
      expect(() =>
        project([events[0], { type: 'Mystery', data: {}, version: 2 } as never]),
      ).toThrow(/unknown event type "Mystery"/);
    });
  });
});

function walk(value: unknown, path: string, visit: (path: string, value: unknown) => void): void {
  visit(path, value);
  if (value !== null && typeof value === 'object') {
    for (const [key, child] of Object.entries(value)) walk(child, `${path}.${key}`, visit);
  }
}

function deepFreeze<T>(value: T): T {
  if (value !== null && typeof value === 'object') {
    for (const child of Object.values(value)) deepFreeze(child);
    Object.freeze(value);
  }
  return value;
}
