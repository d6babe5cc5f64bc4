import { type AdventureEvent, type TurnPolicy } from '@chronicle/adventure';
import { AdventureHistory, narrationCommand, roomHistory } from '@chronicle/adventure/testing';
import { JobName } from '@chronicle/queue';
import { jobsAfter } from './adventure.jobs';

// Given the events just decided and the adventure they leave, then the jobs that follow them.

function adventure(settings: { memoryBankEnabled?: boolean; autoSummarize?: boolean } = {}) {
  return AdventureHistory.create({ adventureId: 'a1', settings });
}

/** A memory job's payload: the adventure, and its owner for the worker's log lines. */
function memoryPayload(ownerId: string | null) {
  return { adventureId: 'a1', ...(ownerId === null ? {} : { userId: ownerId }) };
}

describe('jobsAfter', () => {
  it('given a player action or a retry, then its turn is narrated', () => {
    const history = adventure();
    const acted = history.run({
      type: 'SubmitAction',
      data: { turnId: 't1', inputType: 'do', text: 'look', actionId: 'x1' },
    });
    const owner = history.state.ownerId === null ? {} : { userId: history.state.ownerId };
    expect(jobsAfter(acted, history.state)).toEqual([
      { jobName: JobName.NarrateTurn, payload: { adventureId: 'a1', turnId: 't1', ...owner } },
    ]);
    history.narrate();
    const retried = history.run({ type: 'RequestRetry', data: { turnId: 't2' } });
    expect(jobsAfter(retried, history.state)).toEqual([
      { jobName: JobName.NarrateTurn, payload: { adventureId: 'a1', turnId: 't2', ...owner } },
    ]);
  });

  it('given imported events, then nothing follows: their work was the installation they came from', () => {
    const history = adventure({ memoryBankEnabled: true });
    const acted = history.act('do', 'look');
    const events = history.run(narrationCommand(acted.turnId, 'n1'));
    const imported = [...history.events, ...events].map((event) => ({
      ...event,
      metadata: { importedFrom: { adventureId: 'elsewhere' } },
    }));
    expect(jobsAfter(imported, history.state)).toEqual([]);
  });

  it('given the request that started the turn, then its narrate job carries its id and receive time', () => {
    const history = adventure();
    const acted = history.run({
      type: 'SubmitAction',
      data: { turnId: 't1', inputType: 'do', text: 'look', actionId: 'x1' },
    });
    const [job] = jobsAfter(acted, history.state, { requestId: 'req-1', requestedAt: 1234 });
    expect(job.payload).toMatchObject({ turnId: 't1', requestId: 'req-1', requestedAt: 1234 });
  });

  it('given a narration, then a memory pass follows only when the adventure keeps memories or a summary', () => {
    for (const [settings, passes] of [
      [{ memoryBankEnabled: false, autoSummarize: false }, false],
      [{ memoryBankEnabled: true, autoSummarize: false }, true],
      [{ memoryBankEnabled: false, autoSummarize: true }, true],
    ] as const) {
      const history = adventure(settings);
      history.act('do', 'look');
      const narrated = history.state.inFlight?.turnId ?? '';
      const events = history.run(narrationCommand(narrated, 'n1', { memoriesUsed: ['m1'] }));
      const memoryJobs = jobsAfter(events, history.state).filter(
        (job) => job.jobName === JobName.UpdateMemory,
      );
      expect(memoryJobs).toEqual(
        passes
          ? [{ jobName: JobName.UpdateMemory, payload: memoryPayload(history.state.ownerId) }]
          : [],
      );
    }
  });

  it("given a turn narrated or failed, then a notify job tells its owner's webhooks, by ids only", () => {
    const history = adventure();
    const narrated = history.act('do', 'look').turnId;
    const narration = history.run(narrationCommand(narrated, 'n1'));
    expect(jobsAfter(narration, history.state)).toEqual([
      {
        jobName: JobName.NotifyWebhooks,
        payload: {
          adventureId: 'a1',
          userId: 'owner-1',
          event: 'turn.narrated',
          messageId: `msg_${narrated}_narrated`,
          data: { adventureId: 'a1', turnId: narrated, actionId: 'n1' },
        },
      },
    ]);
    const failed = history.act('do', 'wait').turnId;
    const before = history.events.length;
    history.fail('model unreachable');
    const failure = history.events.slice(before);
    expect(jobsAfter(failure, history.state)).toEqual([
      {
        jobName: JobName.NotifyWebhooks,
        payload: expect.objectContaining({
          event: 'turn.failed',
          messageId: `msg_${failed}_failed`,
          data: { adventureId: 'a1', turnId: failed, code: expect.any(String) },
        }),
      },
    ]);
  });

  it('given a memory the player wrote or edited, then a memory pass embeds it when the bank is on', () => {
    const written: AdventureEvent = {
      type: 'MemoryWritten',
      data: {
        memoryId: 'm1',
        text: 'x',
        sourceStart: null,
        sourceEnd: null,
        anchorActionId: 'opening',
        sourceActionIds: [],
        createdBy: 'player',
      },
    };
    const edited: AdventureEvent = { type: 'MemoryEdited', data: { memoryId: 'm1', text: 'y' } };
    const on = adventure({ memoryBankEnabled: true }).state;
    const off = adventure({ memoryBankEnabled: false }).state;
    const pass = [{ jobName: JobName.UpdateMemory, payload: memoryPayload(on.ownerId) }];
    expect(jobsAfter([written], on)).toEqual(pass);
    expect(jobsAfter([edited], on)).toEqual(pass);
    expect(jobsAfter([written, edited], on)).toEqual(pass);
    expect(jobsAfter([written], off)).toEqual([]);
  });

  it("given the worker's own memories, summaries or evictions, then nothing follows", () => {
    const state = adventure({ memoryBankEnabled: true, autoSummarize: true }).state;
    const events: AdventureEvent[] = [
      {
        type: 'MemoryWritten',
        data: {
          memoryId: 'm1',
          text: 'x',
          sourceStart: 0,
          sourceEnd: 5,
          anchorActionId: 'opening',
          sourceActionIds: ['opening'],
          createdBy: 'worker',
        },
      },
      { type: 'MemoryForgotten', data: { memoryIds: ['m1'], reason: 'capacity' } },
      { type: 'HeadMoved', data: { from: 'a', to: 'b', reason: 'undo' } },
    ];
    expect(jobsAfter(events, state)).toEqual([]);
  });

  describe('a room', () => {
    /** The owner and a player under `policy`, with the given timeouts. */
    function room(policy: TurnPolicy, timeouts: { idle?: number; round?: number } = {}) {
      return roomHistory(
        ['mira'],
        {
          turnPolicy: policy,
          ...(timeouts.idle !== undefined && { idleTimeoutSeconds: timeouts.idle }),
          roundTimeoutSeconds: timeouts.round ?? 0,
        },
        adventure(),
      );
    }

    it('given a round submission, then the round timer and idle timer are set; the last submission is narrated in the same append and the next round opening is told to webhooks', () => {
      const history = room('round', { idle: 30, round: 120 });
      const first = history.run({
        type: 'SubmitAction',
        data: { turnId: 't1', inputType: 'do', text: 'look', actionId: 'x1', actorId: 'mira' },
      });
      expect(jobsAfter(first, history.state)).toEqual([
        {
          jobName: JobName.TurnTimer,
          payload: {
            adventureId: 'a1',
            timer: { timer: 'round', roundId: 'round-1' },
            delayMs: 120_000,
          },
        },
        {
          jobName: JobName.TurnTimer,
          payload: {
            adventureId: 'a1',
            timer: { timer: 'idle', roundId: 'round-1' },
            delayMs: 30_000,
          },
        },
      ]);
      const last = history.run({
        type: 'SubmitAction',
        data: { turnId: 't2', inputType: 'do', text: 'wait', actionId: 'x2', actorId: 'owner-1' },
      });
      // The round it closed opens the next one: webhooks hear round.opened from the same append.
      expect(jobsAfter(last, history.state)).toEqual([
        {
          jobName: JobName.NarrateTurn,
          payload: { adventureId: 'a1', turnId: 't1', userId: 'owner-1' },
        },
        {
          jobName: JobName.NotifyWebhooks,
          payload: {
            adventureId: 'a1',
            userId: 'owner-1',
            event: 'round.opened',
            messageId: 'msg_a1_round-2_opened',
            data: { adventureId: 'a1', roundId: 'round-2' },
          },
        },
      ]);
    });

    it("given a hot-seat turn's end, then the next seat's idle timer is set", () => {
      const history = room('hot-seat', { idle: 45 });
      history.run({
        type: 'SubmitAction',
        data: { turnId: 't1', inputType: 'do', text: 'look', actionId: 'x1', actorId: 'owner-1' },
      });
      const ended = history.run(narrationCommand('t1', 'n1'));
      expect(jobsAfter(ended, history.state)).toContainEqual({
        jobName: JobName.TurnTimer,
        payload: {
          adventureId: 'a1',
          timer: { timer: 'seat', userId: 'mira', since: history.state.turns.seatSince },
          delayMs: 45_000,
        },
      });
    });
  });
});
