import { randomUUID } from 'node:crypto';
import {
  EVENT_SCHEMA_VERSIONS,
  adventureStreamId,
  canonicalJson,
  project,
} from '@chronicle/adventure';
import { createAdventureCommand, narrationCommand } from '@chronicle/adventure/testing';
import { EventStoreRepository, SnapshotRepository } from '@chronicle/event-store';
import { createTestDatabase, type TestDatabase } from '@chronicle/testing';
import { sql } from 'kysely';
import { openAdventureExport } from './adventure-export';
import { importAdventure, ImportRefusedError } from './adventure-import';
import { AdventureCommandHandler, toRecorded } from './adventure.command-handler';

const meta = { actor: 'test' };

describe('export and import (Postgres)', () => {
  let database: TestDatabase;
  let events: EventStoreRepository;
  let repo: AdventureCommandHandler;
  let adventureId: string;
  let exported: string;

  async function rowCount(): Promise<number> {
    const { rows } = await sql<{ n: string }>`SELECT count(*) AS n FROM events`.execute(
      database.db,
    );
    return Number(rows[0].n);
  }

  beforeAll(async () => {
    database = await createTestDatabase();
    events = new EventStoreRepository(database.db);
    repo = new AdventureCommandHandler(events, new SnapshotRepository(database.db), {
      snapshotEvery: 10,
    });
    adventureId = randomUUID();
    await repo.handle(adventureId, createAdventureCommand({ adventureId }), meta);
    for (let turn = 0; turn < 8; turn++) {
      const turnId = randomUUID();
      await repo.handle(
        adventureId,
        {
          type: 'SubmitAction',
          data: { turnId, inputType: 'do', text: `step ${turn}`, actionId: randomUUID() },
        },
        meta,
      );
      const text = `The path bends ${turn}. `.repeat(60 + turn * 20);
      await repo.handle(adventureId, narrationCommand(turnId, randomUUID(), { text }), meta);
    }
    await repo.handle(adventureId, { type: 'Undo', data: {} }, meta);
    const { lines } = await openAdventureExport(events, adventureId, new Date());
    exported = '';
    for await (const chunk of lines) exported += chunk;
  });
  afterAll(() => database.drop());

  it('exports a header line and one line per event, as stored', () => {
    const lines = exported.trimEnd().split('\n');
    const header = JSON.parse(lines[0]);
    expect(header).toMatchObject({
      format: 'chronicle-adventure',
      formatVersion: 1,
      adventureId,
      events: 18,
    });
    expect(lines).toHaveLength(19);
    expect(JSON.parse(lines[1])).toMatchObject({
      type: 'AdventureCreated',
      version: 1,
      schemaVersion: EVENT_SCHEMA_VERSIONS.AdventureCreated,
      id: expect.any(String),
      recordedAt: expect.any(String),
      metadata: { actor: 'test' },
    });
  });

  it('round-trips: the import is a new adventure whose replay equals the original but for id and owner', async () => {
    const newId = randomUUID();
    const imported = await importAdventure(repo, exported, {
      adventureId: newId,
      ownerId: 'importer',
      actor: 'user:importer',
    });
    expect(imported).toEqual({
      adventureId: newId,
      version: 18,
      sourceAdventureId: adventureId,
      events: 18,
    });
    const original = await repo.get(adventureId);
    const copy = project((await events.readStream(adventureStreamId(newId))).map(toRecorded));
    expect(copy).toMatchObject({ id: newId, ownerId: 'importer' });
    // The owner is the room's host: the importer, there too.
    expect(copy.room.members.map((m) => [m.userId, m.role])).toEqual([['importer', 'host']]);
    expect(canonicalJson({ ...copy, id: null, ownerId: null, room: null })).toBe(
      canonicalJson({ ...original, id: null, ownerId: null, room: null }),
    );
    // The story's texts came along, addressed by the same versions.
    const path = original.path;
    expect(await repo.readActionTexts(newId, path)).toEqual(
      await repo.readActionTexts(adventureId, path),
    );
  });

  function lines(): string[] {
    return exported.trimEnd().split('\n');
  }

  const corruptions: [string, () => string, number, RegExp][] = [
    ['a truncated line', () => exported.slice(0, exported.length - 40), 19, /not valid JSON/],
    [
      'a truncated file',
      () => lines().slice(0, 10).join('\n') + '\n',
      11,
      /announces 18 events but the file ends after 9/,
    ],
    [
      'events in the wrong order',
      () => {
        const l = lines();
        [l[5], l[6]] = [l[6], l[5]];
        return l.join('\n');
      },
      6,
      /event version 6 where 5 was expected/,
    ],
    [
      'an unknown event type',
      () => {
        const l = lines();
        l[4] = l[4].replace(/"type":"[A-Za-z]+"/, '"type":"DragonSlain"');
        return l.join('\n');
      },
      5,
      /unknown event type "DragonSlain"/,
    ],
    [
      'a wrong header',
      () => ['{"format":"someone-else","formatVersion":1}', ...lines().slice(1)].join('\n'),
      1,
      /"format" must be "chronicle-adventure"/,
    ],
    ['a missing header', () => lines().slice(1).join('\n'), 1, /"format" must be/],
    [
      'a schema version newer than this build reads',
      () => {
        const l = lines();
        l[3] = l[3].replace('"schemaVersion":1', '"schemaVersion":9');
        return l.join('\n');
      },
      4,
      /newer than this build reads/,
    ],
    [
      'an event the projector refuses',
      () => {
        const l = lines();
        const event = JSON.parse(l[18]);
        event.data.to = 'no-such-action';
        l[18] = JSON.stringify(event);
        return l.join('\n');
      },
      19,
      /the projector refuses this HeadMoved event: .*unknown action no-such-action/,
    ],
  ];

  it.each(corruptions)(
    'refuses %s with its line number and writes nothing',
    async (_name, corrupt, line, problem) => {
      const before = await rowCount();
      const attempt = importAdventure(repo, corrupt(), {
        adventureId: randomUUID(),
        ownerId: 'importer',
        actor: 'user:importer',
      });
      await expect(attempt).rejects.toThrow(ImportRefusedError);
      await expect(attempt).rejects.toMatchObject({ line, kind: 'invalid' });
      await expect(attempt).rejects.toThrow(problem);
      await expect(attempt).rejects.toThrow(new RegExp(`line ${line}:`));
      expect(await rowCount()).toBe(before);
    },
  );
});
