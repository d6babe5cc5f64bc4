import { randomUUID } from 'node:crypto';
import {
  adventureStreamId,
  canonicalJson,
  project,
  projectorVersion,
  turnStatus,
} from '@chronicle/adventure';
import { createAdventureCommand, narrationCommand } from '@chronicle/adventure/testing';
import { EventStoreRepository, SnapshotRepository } from '@chronicle/event-store';
import { createTestDatabase, type TestDatabase } from '@chronicle/testing';
import { sql } from 'kysely';
import { AdventureCommandHandler, toRecorded } from './adventure.command-handler';
import { AdventureReplayer } from './replay';
import { encodeSnapshot } from './snapshot.codec';

// A played adventure, appended through the repository as the apps do, then replayed: the
// rebuild from the first event must equal the live projection byte for byte (canonicalJson),
// with and without snapshots, and every earlier version must read back as it was recorded.

const meta = { actor: 'test' };

/** 1–3 KB of prose, different per turn. */
function prose(turn: number): string {
  const sentence = `Turn ${turn}: the tide climbs the black rocks while the lamp turns overhead. `;
  return sentence.repeat(Math.ceil((1000 + ((turn * 677) % 2000)) / sentence.length));
}

interface Played {
  adventureId: string;
  /** canonicalJson of the projection right after each version, by version. */
  recorded: Map<number, string>;
}

async function play(repo: AdventureCommandHandler, turns: number): Promise<Played> {
  const adventureId = randomUUID();
  const recorded = new Map<number, string>();
  const run = async (command: Parameters<AdventureCommandHandler['handle']>[1]) => {
    const { state } = await repo.handle(adventureId, command, meta);
    recorded.set(state.version, canonicalJson(state));
    return state;
  };
  await run(createAdventureCommand({ adventureId, openingActionId: randomUUID() }));
  let lastAi = '';
  for (let turn = 0; turn < turns; turn++) {
    const turnId = randomUUID();
    const actionId = randomUUID();
    await run({
      type: 'SubmitAction',
      data: { turnId, inputType: turn % 3 === 0 ? 'say' : 'do', text: `look ${turn}`, actionId },
    });
    if (turn === 7) {
      await run({
        type: 'RecordNarrationFailure',
        data: { turnId, error: 'model unreachable', attempts: 3 },
      });
      continue;
    }
    const accepted =
      turn === 0
        ? [{ type: 'enter', id: 'mira', name: 'Mira', kind: 'character', status: 'alive' }]
        : [{ type: 'status', id: 'mira', to: turn % 2 ? 'tired' : 'alive' }];
    lastAi = randomUUID();
    await run(narrationCommand(turnId, lastAi, { text: prose(turn), reported: accepted as never }));
    if (turn === 12) {
      // A retry, an undo and a redo, an edit: the tree moves, not just the tip.
      const retryTurn = randomUUID();
      await run({ type: 'RequestRetry', data: { turnId: retryTurn } });
      lastAi = randomUUID();
      await run(narrationCommand(retryTurn, lastAi, { text: prose(100 + turn) }));
      await run({ type: 'Undo', data: {} });
      await run({ type: 'Redo', data: {} });
      await run({ type: 'EditAction', data: { actionId: lastAi, text: prose(200) } });
    }
  }
  return { adventureId, recorded };
}

describe('replay, snapshots and upcasting (Postgres)', () => {
  let database: TestDatabase;
  let events: EventStoreRepository;
  let snapshots: SnapshotRepository;
  let replayer: AdventureReplayer;

  beforeAll(async () => {
    database = await createTestDatabase();
    events = new EventStoreRepository(database.db);
    snapshots = new SnapshotRepository(database.db);
    replayer = new AdventureReplayer(events, snapshots);
  });
  afterAll(() => database.drop());

  const fresh = (snapshotEvery: number) =>
    new AdventureCommandHandler(events, snapshots, { snapshotEvery });

  it('given a 30-turn adventure played with snapshots every 10 events, then the replay equals the live projection and every version reads back as recorded', async () => {
    const live = fresh(10);
    const { adventureId, recorded } = await play(live, 30);
    await live.snapshotsWritten();
    const streamId = adventureStreamId(adventureId);
    const latest = Math.max(...recorded.keys());

    const snapshot = await snapshots.loadSnapshot(streamId, projectorVersion);
    expect(snapshot?.version).toBeGreaterThanOrEqual(latest - 10);

    const rebuilt = project((await events.readStream(streamId)).map(toRecorded));
    expect(canonicalJson(rebuilt)).toBe(recorded.get(latest));
    expect(canonicalJson(await fresh(10).load(adventureId))).toBe(recorded.get(latest));
    expect(canonicalJson(await live.load(adventureId))).toBe(recorded.get(latest));

    const report = await replayer.replay(adventureId);
    expect(report).toMatchObject({
      equal: true,
      events: latest,
      snapshotVersion: snapshot?.version,
      differences: [],
      error: null,
    });

    const reader = fresh(10);
    for (let version = 1; version <= latest; version++) {
      expect(canonicalJson(await reader.loadAt(adventureId, version))).toBe(recorded.get(version));
    }
    await expect(reader.loadAt(adventureId, latest + 1)).rejects.toThrow(/no version/);
  });

  it('given an adventure without snapshots, then the replay still equals the live projection', async () => {
    const live = fresh(1_000_000);
    const { adventureId, recorded } = await play(live, 5);
    const streamId = adventureStreamId(adventureId);
    expect(await snapshots.loadSnapshot(streamId, projectorVersion)).toBeUndefined();
    const latest = Math.max(...recorded.keys());
    expect(canonicalJson(await fresh(1_000_000).load(adventureId))).toBe(recorded.get(latest));
    expect(await replayer.replay(adventureId)).toMatchObject({
      equal: true,
      snapshotVersion: null,
    });
  });

  it("given only an older projector version's snapshot, then it is ignored and a new one is written on the next load", async () => {
    const { adventureId, recorded } = await play(fresh(1_000_000), 12);
    const streamId = adventureStreamId(adventureId);
    const latest = Math.max(...recorded.keys());
    // A poisoned snapshot under the previous projector version: were it read, the title shows.
    const old = JSON.parse(recorded.get(latest) as string);
    old.fields.title = 'FROM THE OLD PROJECTOR';
    await snapshots.saveSnapshot(streamId, projectorVersion - 1, latest, encodeSnapshot(old));

    const reloading = fresh(10);
    const loaded = await reloading.load(adventureId);
    await reloading.snapshotsWritten();
    expect(loaded?.fields.title).not.toBe('FROM THE OLD PROJECTOR');
    expect(canonicalJson(loaded)).toBe(recorded.get(latest));
    const rebuiltSnapshot = await snapshots.loadSnapshot(streamId, projectorVersion);
    expect(rebuiltSnapshot?.version).toBe(latest);
    expect(canonicalJson(await fresh(10).load(adventureId))).toBe(recorded.get(latest));
  });

  it('given a corrupted snapshot, when replayed, then the difference names the version and the path', async () => {
    const { adventureId, recorded } = await play(fresh(1_000_000), 10);
    const streamId = adventureStreamId(adventureId);
    const at = 9; // the third turn's narration (versions: 1 created, then 2 per turn)
    const corrupt = JSON.parse(recorded.get(at) as string);
    corrupt.narrative.entities.mira.status = 'dead';
    await snapshots.saveSnapshot(streamId, projectorVersion, at, encodeSnapshot(corrupt));

    const report = await replayer.replay(adventureId);
    expect(report.equal).toBe(false);
    expect(report.differences[0]).toMatchObject({
      against: 'snapshot',
      version: at,
      eventType: 'Narrated',
      path: 'narrative.entities.mira.status',
      stored: '"dead"',
    });
    // Later turns set the status again, so the loads through this snapshot agree by the end.
    expect(report.differences).toHaveLength(1);

    corrupt.fields.title = 'Not the title';
    await snapshots.saveSnapshot(streamId, projectorVersion, at, encodeSnapshot(corrupt));
    const lasting = await replayer.replay(adventureId);
    expect(lasting.differences).toEqual([
      expect.objectContaining({ against: 'snapshot', version: 1, path: 'fields.title' }),
      expect.objectContaining({ against: 'stored', version: at, path: 'fields.title' }),
    ]);

    // A node of the story tree is named by its id, not by the bucket that keeps it.
    const tree = JSON.parse(recorded.get(at) as string) as {
      nodes: Record<string, { tokens: number }>[];
    };
    const bucket = tree.nodes.findIndex((nodes) => Object.keys(nodes).length > 0);
    const nodeId = Object.keys(tree.nodes[bucket])[0];
    tree.nodes[bucket][nodeId].tokens += 1_000;
    await snapshots.saveSnapshot(streamId, projectorVersion, at, encodeSnapshot(tree as never));
    expect((await replayer.replay(adventureId)).differences[0]).toMatchObject({
      against: 'snapshot',
      path: `nodes.${nodeId}.tokens`,
    });
  });

  it('reads a v1 NarrationFailed stored raw as the v2 shape, and leaves the row as it was written', async () => {
    const adventureId = randomUUID();
    const repo = fresh(1_000_000);
    await repo.handle(adventureId, createAdventureCommand({ adventureId }), meta);
    const turnId = randomUUID();
    const { state } = await repo.handle(
      adventureId,
      { type: 'SubmitAction', data: { turnId, inputType: 'do', text: 'wait', actionId: 'a1' } },
      meta,
    );
    const streamId = adventureStreamId(adventureId);
    await events.appendToStream(
      streamId,
      [
        {
          id: randomUUID(),
          type: 'NarrationFailed',
          schemaVersion: 1,
          data: { turnId, error: 'the model timed out', attempts: 3 },
        },
      ],
      { expectedVersion: state.version },
    );

    const [read] = (await events.readStream(streamId, { from: state.version + 1 })).map(toRecorded);
    expect(read.data).toEqual({
      turnId,
      code: 'model_timeout',
      message: 'the model timed out',
      attempts: 3,
    });
    const loaded = await fresh(1_000_000).load(adventureId);
    expect(turnStatus(loaded!, turnId)).toEqual({
      status: 'failed',
      error: 'the model timed out',
      code: 'model_timeout',
    });
    const row = await sql<{ schema_version: number; data: unknown }>`
      SELECT schema_version, data FROM events WHERE stream_id = ${streamId} AND type = 'NarrationFailed'
    `.execute(database.db);
    expect(row.rows).toEqual([
      { schema_version: 1, data: { turnId, error: 'the model timed out', attempts: 3 } },
    ]);
    expect((await replayer.replay(adventureId)).equal).toBe(true);
  });

  it('given checkpoints every 20 versions, then a read far below the latest starts from a checkpoint, leaves one behind, and still reads as recorded', async () => {
    const spaced = new SnapshotRepository(database.db, { checkpointEvery: 20 });
    const live = new AdventureCommandHandler(events, spaced, { snapshotEvery: 7 });
    const { adventureId, recorded } = await play(live, 30);
    await live.snapshotsWritten();
    const streamId = adventureStreamId(adventureId);
    const latest = Math.max(...recorded.keys());
    const kept = await spaced.listVersions(streamId, projectorVersion);
    // Bounded: at most one per stretch of 20 versions, plus the latest.
    expect(kept.length).toBeLessThanOrEqual(Math.ceil(latest / 20) + 1);
    expect(kept.at(-1)).toBeGreaterThan(latest - 7);

    // Without the checkpoints below the latest, a read at 45 folds from the first event and
    // leaves a checkpoint at 40 for the next one.
    await sql`DELETE FROM snapshots WHERE stream_id = ${streamId} AND version < ${latest - 7}`.execute(
      database.db,
    );
    const reader = new AdventureCommandHandler(events, spaced, { snapshotEvery: 7 });
    expect(canonicalJson(await reader.loadAt(adventureId, 45))).toBe(recorded.get(45));
    expect(await spaced.listVersions(streamId, projectorVersion)).toContain(40);
    for (let version = 1; version <= latest; version++) {
      expect(canonicalJson(await reader.loadAt(adventureId, version))).toBe(recorded.get(version));
    }
    expect(await replayerWith(spaced).replay(adventureId)).toMatchObject({ equal: true });
  });

  const replayerWith = (snapshotStore: SnapshotRepository) =>
    new AdventureReplayer(events, snapshotStore);
});
