import { storyPath, type AdventureState } from '@chronicle/adventure';
import { AdventureHistory } from '@chronicle/adventure/testing';
import { passagesToIndex } from './passage.fusion';
import { onPath, pathIndex, StoryPathIndex } from './story-path.index';

/** xorshift32: the same walk on every run. */
function random(seed: number): () => number {
  let x = seed | 0 || 1;
  return () => {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    return (x >>> 0) / 4294967296;
  };
}

/** What the index must answer for `state`, read from storyPath itself. */
function expectSameStory(index: StoryPathIndex, state: AdventureState): void {
  const story = storyPath(state);
  const places = new Map(story.map((entry, position) => [entry.id, { entry, position }]));
  const every = new Set([...state.path.map((entry) => entry.id), ...places.keys()]);
  for (const { actionId } of passagesToIndex(state, 0)) every.add(actionId);
  const answered = [...every].map((id) => [id, index.textVersionOf(id), index.placeOf(id)]);
  const expected = [...every].map((id) => [id, places.get(id)?.entry.textVersion, places.get(id)]);
  expect(answered).toEqual(expected);
}

/** One step a player may take, chosen by `next`; false when it did not apply here. */
function play(history: AdventureHistory, next: () => number, step: number): void {
  const state = history.state;
  const inFlight = state.inFlight !== null;
  const path = storyPath(state);
  const pick = () => path[1 + Math.floor(next() * (path.length - 1))];
  const roll = next();
  try {
    if (inFlight) {
      if (roll < 0.7) history.narrate({ text: `take ${step}` });
      else if (roll < 0.85) history.fail();
      else history.cancel();
    } else if (roll < 0.4) history.act('do', `act ${step}`);
    else if (roll < 0.5) history.undo();
    else if (roll < 0.58) history.redo();
    else if (roll < 0.68) history.requestRetry();
    else if (roll < 0.76 && path.length > 2) history.moveHead(pick().id);
    else if (roll < 0.86 && path.length > 2) history.edit(pick().id, `edited ${step}`);
    else if (roll < 0.92 && path.length > 2) history.erase(pick().id);
    else history.turn('say', `turn ${step}`);
  } catch {
    // The decider refused the step here (nothing to redo, an erased opening...): play on.
  }
}

describe('the story path index kept across projections', () => {
  it('given a long random walk of turns, undos, redos, retries, branches, edits and erasures, when one index is synced to each projection in turn, then it answers exactly as storyPath does', () => {
    const next = random(26);
    const history = AdventureHistory.create();
    const kept = new StoryPathIndex();
    for (let step = 0; step < 400; step++) {
      play(history, next, step);
      expectSameStory(kept.sync(history.state), history.state);
    }
  });

  it('given projections synced out of order (concurrent turns, an older state after a newer), then each sync answers for its own state and an off-path take never leaks', () => {
    const next = random(7);
    const history = AdventureHistory.create();
    const states: AdventureState[] = [];
    for (let step = 0; step < 150; step++) {
      play(history, next, step);
      states.push(history.state);
    }
    const kept = new StoryPathIndex();
    for (let i = 0; i < 300; i++) {
      const state = states[Math.floor(next() * states.length)];
      expectSameStory(kept.sync(state), state);
    }
  });

  it('given a retry in flight and then its new take, then the replaced take is off the path while in flight and stays off after', () => {
    const history = AdventureHistory.create();
    const turn = history.turn('do', 'Climb the tower');
    const kept = new StoryPathIndex();
    const old = { actionId: turn.aiActionId, textVersion: history.version };
    expect(onPath(old, kept.sync(history.state))).toBe(true);
    history.requestRetry();
    expect(onPath(old, kept.sync(history.state))).toBe(false);
    const take = history.narrate({ text: 'A second take.' });
    expect(onPath(old, kept.sync(history.state))).toBe(false);
    expect(kept.textVersionOf(take)).toBe(history.version);
    expect(pathIndex(history.state).textVersionOf(take)).toBe(history.version);
  });
});
