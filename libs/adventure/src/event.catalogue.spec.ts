import { createAdventureCommand, narrationCommand, wordCountTokens } from './testing';
import { decide } from './adventure.decider';
import { project, projectFrom } from './adventure.projector';
import { initialState } from './adventure.state';
import { EVENT_CATALOGUE, eventTypesThat, modelCallOf, turnRoleOf } from './event.catalogue';
import type { AdventureEvent } from './adventure.events';

describe('the event catalogue', () => {
  it('given the turn roles, then a turn starts with an action or a retry and ends however it ends', () => {
    expect(eventTypesThat('starts').sort()).toEqual([
      'PlayerActed',
      'PlayersActed',
      'RetryRequested',
    ]);
    expect(eventTypesThat('ends').sort()).toEqual([
      'Narrated',
      'NarrationCancelled',
      'NarrationFailed',
      'TurnStoppedByScript',
    ]);
  });

  it('given every event type that plays a part in a turn, when the projector folds it, then it agrees with the catalogue', () => {
    const created = decide(
      createAdventureCommand({ adventureId: 'a-1' }),
      initialState(),
      wordCountTokens,
    );
    let state = project(created.map((e, i) => ({ ...e, version: i + 1 }) as never));
    const acted = decide(
      {
        type: 'SubmitAction',
        data: { turnId: 't-1', inputType: 'do', text: 'go', actionId: 'x-1' },
      },
      state,
      wordCountTokens,
    );
    state = projectFrom(
      state,
      acted.map((e, i) => ({ ...e, version: state.version + i + 1 }) as never),
    );
    expect(acted.map(turnRoleOf)).toContainEqual({ role: 'starts', turnId: 't-1' });
    expect(state.inFlight?.turnId).toBe('t-1');
    for (const end of [
      { type: 'NarrationCancelled', data: { turnId: 't-1' } },
      {
        type: 'NarrationFailed',
        data: { turnId: 't-1', code: 'internal', message: 'x', attempts: 1 },
      },
      {
        type: 'TurnStoppedByScript',
        data: { turnId: 't-1', hook: 'context', scriptId: 's', message: 'stop' },
      },
      ...decide(narrationCommand('t-1', 'n-1'), state, wordCountTokens),
    ] as AdventureEvent[]) {
      if (turnRoleOf(end)?.role !== 'ends') continue;
      const after = projectFrom(state, [{ ...end, version: state.version + 1 } as never]);
      expect([end.type, after.inFlight]).toEqual([end.type, null]);
    }
  });

  it('given a narration, then its model call is counted unless the offline narrator wrote it', () => {
    const narrated = {
      type: 'Narrated',
      data: {
        narrator: 'remote',
        model: 'old-name',
        usage: { promptTokens: 10, completionTokens: 5, cachedTokens: 2 },
      },
    } as unknown as AdventureEvent;
    expect(modelCallOf(narrated)).toEqual({
      purpose: 'narration',
      model: 'old-name',
      promptTokens: 10,
      completionTokens: 5,
      cachedTokens: 2,
    });
    const offline = {
      ...narrated,
      data: { ...narrated.data, narrator: 'offline' },
    } as AdventureEvent;
    expect(modelCallOf(offline)).toBeNull();
    expect(
      Object.entries(EVENT_CATALOGUE)
        .filter(([, declaration]) => 'usage' in declaration)
        .map(([type]) => type)
        .sort(),
    ).toEqual([
      'ChapterWritten',
      'MemoryWritten',
      'ModelUsageRecorded',
      'Narrated',
      'SummaryWritten',
    ]);
  });
});
