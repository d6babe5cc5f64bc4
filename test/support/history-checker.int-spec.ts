// The history checker must be able to fail: given logs written by hand with one fault each, it
// names that fault; given a clean log, it reports none. Real Postgres, this file's own database.
import { randomUUID } from 'node:crypto';
import { createTestDatabase, type TestDatabase } from './database';
import { checkHistory, HistoryLedger, type HistoryReport } from './history-checker';
import type { TurnStreamResult } from './sse-client';

let database: TestDatabase;

beforeAll(async () => {
  database = await createTestDatabase();
});

afterAll(async () => {
  await database?.drop();
});

interface Written {
  adventureId: string;
  actionId: string;
  turnId: string;
  narration: string;
  narrationId: string;
}

/** Writes events straight into the log, versions as given (so a gap can be written too). */
async function write(
  adventureId: string,
  events: Array<{ version: number; type: string; data: Record<string, unknown>; id?: string }>,
): Promise<void> {
  const streamId = `adventure-${adventureId}`;
  for (const event of events) {
    await database.db
      .insertInto('events')
      .values({
        stream_id: streamId,
        version: event.version,
        event_id: event.id ?? randomUUID(),
        type: event.type,
        schema_version: 1,
        data: JSON.stringify(event.data),
      })
      .execute();
  }
  const head = Math.max(...events.map((e) => e.version));
  await database.db
    .insertInto('streams')
    .values({ stream_id: streamId, version: head })
    .onConflict((oc) => oc.column('stream_id').doUpdateSet({ version: head }))
    .execute();
}

/** An adventure with one turn: created, acted, narrated (versions 1–3). */
async function playedTurn(options: { terminals?: string[] } = {}): Promise<Written> {
  const turn: Written = {
    adventureId: randomUUID(),
    actionId: randomUUID(),
    turnId: randomUUID(),
    narration: 'The tide comes in (take 1). The gulls leave.',
    narrationId: randomUUID(),
  };
  const terminals = options.terminals ?? ['Narrated'];
  await write(turn.adventureId, [
    { version: 1, type: 'AdventureCreated', data: { adventureId: turn.adventureId } },
    {
      version: 2,
      type: 'PlayerActed',
      id: turn.actionId,
      data: { turnId: turn.turnId, inputType: 'do', action: { id: turn.actionId, text: 'wait' } },
    },
    ...terminals.map((type, i) => ({
      version: 3 + i,
      type,
      data: {
        turnId: turn.turnId,
        action: { id: turn.narrationId, text: turn.narration },
        ...(type === 'NarrationFailed' && { code: 'model_timeout', message: 'slow' }),
      },
    })),
  ]);
  return turn;
}

function screen(turn: Written, text: string, outcome: 'done' | 'error' = 'done'): TurnStreamResult {
  return {
    frames: [],
    text,
    outcome,
    final:
      outcome === 'done'
        ? { action: { id: turn.narrationId, text: turn.narration } }
        : { message: 'x' },
    resets: 0,
    connections: 1,
    status: 200,
    contentType: 'text/event-stream',
  };
}

function acknowledged(ledger: HistoryLedger, turn: Written): void {
  ledger.submitted({
    adventureId: turn.adventureId,
    id: turn.actionId,
    status: 202,
    turnId: turn.turnId,
  });
}

function check(ledger: HistoryLedger, extra: Partial<Parameters<typeof checkHistory>[2]> = {}) {
  return checkHistory(database.connectionString, ledger, {
    settleTimeoutMs: 300,
    adventures: ledger.adventures,
    attemptMarker: /\(take \d+\)/,
    ...extra,
  });
}

function expectProblem(report: HistoryReport, pattern: RegExp): void {
  expect(report.problems).toEqual([expect.stringMatching(pattern)]);
}

describe('the history checker', () => {
  it('given an acknowledged turn narrated once and a screen showing its prose, reports no problem', async () => {
    const ledger = new HistoryLedger();
    const turn = await playedTurn();
    acknowledged(ledger, turn);
    ledger.watched({ ...turn, result: screen(turn, 'The tide comes in (take 1).') });

    const report = await check(ledger);

    expect(report.problems).toEqual([]);
    expect(report).toMatchObject({ acknowledged: 1, foundOnce: 1, lost: 0, duplicated: 0 });
    expect(report.terminals).toEqual({ Narrated: 1 });
  });

  it('given a 202 whose action is not in the log, counts it lost', async () => {
    const ledger = new HistoryLedger();
    const turn = await playedTurn();
    ledger.submitted({
      adventureId: turn.adventureId,
      id: randomUUID(),
      status: 202,
      turnId: randomUUID(),
    });

    const report = await check(ledger);

    expect(report).toMatchObject({ acknowledged: 1, lost: 1 });
    expectProblem(report, /acknowledged \(202\) but not in the log/);
  });

  it('given a refused (409) action that is in the log, reports it written', async () => {
    const ledger = new HistoryLedger();
    const turn = await playedTurn();
    ledger.submitted({ adventureId: turn.adventureId, id: turn.actionId, status: 409 });

    const report = await check(ledger);

    expect(report).toMatchObject({ refused: 1, refusedWritten: 1 });
    expectProblem(report, /refused \(409\) but in the log/);
  });

  it("given a gap in a stream's versions, names the stream and the version", async () => {
    const ledger = new HistoryLedger();
    const adventureId = randomUUID();
    ledger.created(adventureId);
    await write(adventureId, [
      { version: 1, type: 'AdventureCreated', data: {} },
      { version: 3, type: 'AdventureEdited', data: {} },
    ]);

    const report = await check(ledger);

    expect(report.problems).toEqual([
      expect.stringMatching(/version 3 where 2 was due/),
      expect.stringMatching(/head says version 3, the log holds 2/),
    ]);
  });

  it('given a turn with no terminal event, waits the bound and reports it in flight', async () => {
    const ledger = new HistoryLedger();
    const turn = await playedTurn({ terminals: [] });
    acknowledged(ledger, turn);

    const report = await check(ledger);

    expectProblem(report, /still in flight, no terminal event/);
  });

  it('given a turn with two terminal events, reports both', async () => {
    const ledger = new HistoryLedger();
    const turn = await playedTurn({ terminals: ['Narrated', 'NarrationFailed'] });
    acknowledged(ledger, turn);

    const report = await check(ledger);

    expectProblem(report, /2 terminal events \(Narrated@3, NarrationFailed@4\)/);
    expect(report.terminals).toEqual({ Narrated: 1, 'NarrationFailed:model_timeout': 1 });
  });

  it('given a screen that showed text the log did not keep, or two takes, reports two attempts', async () => {
    const ledger = new HistoryLedger();
    const turn = await playedTurn();
    acknowledged(ledger, turn);
    ledger.watched({ ...turn, result: screen(turn, 'The tide (take 2) comes in (take 1).') });

    const report = await check(ledger);

    expect(report.problems).toEqual([
      expect.stringMatching(/the screen showed .* the log kept/),
      expect.stringMatching(/the screen shows 2 attempts/),
    ]);
  });

  it('given a screen that showed done for a turn the log failed, reports the disagreement', async () => {
    const ledger = new HistoryLedger();
    const turn = await playedTurn({ terminals: ['NarrationFailed'] });
    acknowledged(ledger, turn);
    ledger.watched({ ...turn, result: screen(turn, 'The tide comes in') });

    const report = await check(ledger);

    expectProblem(report, /showed done, the log says NarrationFailed/);
  });

  it('checks only the adventures asked for', async () => {
    const broken = await playedTurn({ terminals: [] });
    const ledger = new HistoryLedger();
    const turn = await playedTurn();
    acknowledged(ledger, turn);

    const report = await check(ledger);

    expect(report.problems).toEqual([]);
    expect(report.turns).toBe(1);
    expect(broken.adventureId).not.toBe(turn.adventureId);
  });
});
