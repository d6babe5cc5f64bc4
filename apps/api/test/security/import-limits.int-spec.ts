import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import { LIMITS } from '@chronicle/adventure';
import { QueueName, QueueProducer } from '@chronicle/queue';
import { aScenario, startApiHarness, type ApiHarness } from '../api.harness';

// An import is held to the API's rules: a file whose events no request could have made is
// refused whole, with the line and the field, and nothing is written. A turn in flight in the
// export arrives closed as failed, and is never queued again under the original's job id.

/** One exported event, to tamper with. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
type ExportLine = { data: any };

describe('import limits', () => {
  let api: ApiHarness;
  let exported: string[];
  let sourceId: string;
  let inFlightTurn: string;

  beforeAll(async () => {
    api = await startApiHarness({ modelName: 'house-model', modelAllowed: ['house-model'] });
    sourceId = (await api.request('POST', '/v1/adventures', aScenario())).body.id;
    // No worker runs here: the turn stays in flight, as in an export taken mid-turn.
    const turn = await api.request('POST', `/v1/adventures/${sourceId}/actions`, {
      type: 'do',
      text: 'ring the bell',
    });
    inFlightTurn = turn.body.turnId;
    const response = await fetch(`${api.baseUrl}/v1/adventures/${sourceId}/export`, {
      headers: { authorization: `Bearer ${api.apiKey}` },
    });
    exported = (await response.text()).trimEnd().split('\n');
  });
  afterAll(() => api.close());

  const eventCount = async () =>
    Number(
      (await sql<{ n: string }>`SELECT count(*) AS n FROM events`.execute(api.database.db)).rows[0]
        .n,
    );
  const send = (lines: string[], contentType = 'application/x-ndjson') =>
    api.request('POST', '/v1/adventures/import', lines.join('\n'), {
      'content-type': contentType,
    });
  /** The export with line `n` (1 is the header) changed by `change`. */
  const withLine = (n: number, change: (event: ExportLine) => void) =>
    exported.map((line, index) => {
      if (index !== n - 1) return line;
      const event = JSON.parse(line);
      change(event);
      return JSON.stringify(event);
    });

  it.each([
    [
      'a context budget of 10^9',
      (e: ExportLine) => (e.data.settings.contextTokenBudget = 1e9),
      /settings\.contextTokenBudget must be between 256 and 200000/,
    ],
    [
      'an output cap of 10^7',
      (e: ExportLine) => (e.data.settings.maxOutputTokens = 1e7),
      /settings\.maxOutputTokens must be between 1 and 100000/,
    ],
    [
      'one story card past the limit',
      (e: ExportLine) =>
        (e.data.storyCards = Array.from({ length: LIMITS.storyCardsPerAdventure + 1 }, (_, i) => ({
          id: `c${i}`,
          name: `Card ${i}`,
          keys: '',
          entry: '',
          type: 'other',
          notes: '',
        }))),
      /storyCardsPerAdventure/,
    ],
    [
      '60,000 characters of plot essentials',
      (e: ExportLine) => (e.data.plotEssentials = 'x'.repeat(60_000)),
      /plotEssentials is 60000 characters; keep it to 50000/,
    ],
    [
      'a NUL in the title',
      (e: ExportLine) => (e.data.title = 'The\u0000Bell'),
      /data\.title contains a NUL character/,
    ],
    ['a NUL deep in a card', (e: ExportLine) => (e.data.storyCards[0].entry = 'a\u0000b'), /NUL/],
    [
      'a model the installation does not offer',
      (e: ExportLine) => (e.data.settings.model = 'gpt-4-32k'),
      /settings\.model "gpt-4-32k" is not offered/,
    ],
    [
      'an unknown setting',
      (e: ExportLine) => (e.data.settings.sneaky = true),
      /settings\.sneaky is not a setting/,
    ],
    [
      'a persona field no request could set',
      (e: ExportLine) => (e.data.persona.role = 'admin'),
      /data\.persona\.role is not a field of data\.persona/,
    ],
  ])('refuses %s: 400 naming line 2 and the field, nothing written', async (_, change, message) => {
    const before = await eventCount();
    const reply = await send(withLine(2, change));
    expect(reply.status).toBe(400);
    expect(reply.body.message).toMatch(/^import refused: line 2: AdventureCreated: /);
    expect(reply.body.message).toMatch(message);
    expect(await eventCount()).toBe(before);
  });

  it('refuses an action no request could make: a second turn while one is in flight', async () => {
    const before = await eventCount();
    const acted = JSON.parse(exported[2]);
    const second = {
      ...acted,
      id: randomUUID(),
      version: acted.version + 1,
      data: {
        ...acted.data,
        turnId: randomUUID(),
        action: { ...acted.data.action, id: randomUUID() },
      },
    };
    const header = { ...JSON.parse(exported[0]), events: JSON.parse(exported[0]).events + 1 };
    const reply = await send([
      JSON.stringify(header),
      ...exported.slice(1),
      JSON.stringify(second),
    ]);
    expect(reply.status).toBe(400);
    expect(reply.body.message).toMatch(
      /line \d+: PlayerActed: a turn starts while turn .* is still in flight/,
    );
    expect(await eventCount()).toBe(before);
  });

  it('refuses JSON nested deeper than any event', async () => {
    // Built as text: JSON.stringify itself recurses too deep for this.
    const deep = `${'{"deeper":'.repeat(5_000)}"bottom"${'}'.repeat(5_000)}`;
    const lines = [...exported];
    lines[1] = lines[1].replace('"canon":{', `"canon":{"extra":${deep},`);
    const reply = await send(lines);
    expect(reply.status).toBe(400);
    expect(reply.body.message).toMatch(/line 2: .*nests more than 32 deep/);
    expect(JSON.stringify(reply.body)).not.toMatch(/call stack/i);
  });

  describe('whatever the API accepted, the import accepts (issue 27)', () => {
    const exportOf = async (id: string) => {
      const response = await fetch(`${api.baseUrl}/v1/adventures/${id}/export`, {
        headers: { authorization: `Bearer ${api.apiKey}` },
      });
      return (await response.text()).trimEnd().split('\n');
    };

    it('given scripts the size of Hashtag-DnD and Inner Self, a 100 KB script state and a lore entry with a 60,000-character field, when the adventure is exported and imported, then it all arrives', async () => {
      const id = (await api.request('POST', '/v1/adventures', aScenario())).body.id as string;
      // A Library of 300 KB (Hashtag-DnD's is ~350 KB) and a 100 KB Input hook, each with one
      // string over the 50,000 every other text is held to.
      const library = `var helpText = "${'h'.repeat(300_000)}";`;
      const input = `// ${'i'.repeat(100_000)}\nstate.notes = "n".repeat(100000); ({ text })`;
      const added = await api.request('POST', `/v1/adventures/${id}/scripts`, {
        name: 'Hashtag DnD',
        library,
        input,
      });
      expect(added.status).toBe(201);
      // onInput runs in the API: its state is in the log with the player action.
      const acted = await api.request('POST', `/v1/adventures/${id}/actions`, {
        type: 'do',
        text: 'open the book',
      });
      expect(acted.status).toBe(202);
      const world = {
        entries: {
          '0': {
            uid: 0,
            key: ['tower'],
            comment: 'Tower',
            content: 'The tower leans.',
            extensions: { authorNotes: 'a'.repeat(60_000) },
          },
        },
      };
      const lore = await api.request(
        'POST',
        `/v1/adventures/${id}/story-cards/import`,
        JSON.stringify(world),
        { 'content-type': 'application/json' },
      );
      expect(lore.status).toBe(200);

      const imported = await send(await exportOf(id));
      expect(imported.status).toBe(201);
      const copy = imported.body.adventureId as string;
      const scripts = await api.request('GET', `/v1/adventures/${copy}/scripts`);
      expect(scripts.body.scripts[0]).toMatchObject({ name: 'Hashtag DnD', library, input });
      const scriptId = scripts.body.scripts[0].id as string;
      const state = await api.request('GET', `/v1/adventures/${copy}/scripts/${scriptId}/state`);
      expect((state.body.state.notes as string).length).toBe(100_000);
      const lines = await exportOf(copy);
      expect(lines.join('\n')).toContain('a'.repeat(60_000));
    });

    it('still refuses what no request could have made: a script state over 256 KiB', async () => {
      const id = (await api.request('POST', '/v1/adventures', aScenario())).body.id as string;
      await api.request('POST', `/v1/adventures/${id}/scripts`, {
        name: 'Notes',
        input: 'state.n = 1; ({ text })',
      });
      await api.request('POST', `/v1/adventures/${id}/actions`, { type: 'do', text: 'wait' });
      const lines = await exportOf(id);
      const at = lines.findIndex((line) => JSON.parse(line).type === 'ScriptStateChanged');
      const event = JSON.parse(lines[at]);
      event.data.state = { notes: 'n'.repeat(LIMITS.scripts.stateChars) };
      const tooBig = [...lines];
      tooBig[at] = JSON.stringify(event);
      const before = await eventCount();
      const reply = await send(tooBig);
      expect(reply.status).toBe(400);
      expect(reply.body.message).toMatch(
        new RegExp(
          `line ${at + 1}: ScriptStateChanged: data.state is \\d+ characters of JSON; a script's state is at most ${LIMITS.scripts.stateChars}`,
        ),
      );
      expect(await eventCount()).toBe(before);
    });
  });

  it('takes only NDJSON: a JSON body is a 415 naming what to send', async () => {
    const reply = await send(exported, 'application/json');
    expect(reply.status).toBe(415);
    expect(reply.body.message).toMatch(/application\/x-ndjson/);
  });

  it('imports a turn in flight closed as failed, queues nothing, and takes a new action', async () => {
    const queue = api.app.get(QueueProducer).queue(QueueName.Narrate);
    const jobsBefore = await queue.getJobCounts();
    const reply = await send(exported);
    expect(reply.status).toBe(201);
    const id = reply.body.adventureId as string;
    const log = await api.request('GET', `/v1/adventures/${id}/events`);
    const types = log.body.events.map((e: { type: string }) => e.type);
    expect(types).toEqual(['AdventureCreated', 'PlayerActed', 'NarrationFailed']);
    const failed = log.body.events[2].data;
    expect(failed.message).toMatch(/still being narrated when the adventure was exported/);
    // The imported turn has an id of the new adventure's, not the original's.
    expect(failed.turnId).not.toBe(inFlightTurn);
    expect(log.body.events[1].data.turnId).toBe(failed.turnId);
    const status = await api.request('GET', `/v1/adventures/${id}/turns/${failed.turnId}`);
    expect(status.body).toMatchObject({ status: 'failed' });
    await new Promise((resolve) => setTimeout(resolve, 300)); // an outbox sweep would have run
    expect(await queue.getJobCounts()).toEqual(jobsBefore);
    expect(await queue.getJob(`narrate-${failed.turnId}`)).toBeUndefined();
    const next = await api.request('POST', `/v1/adventures/${id}/actions`, {
      type: 'do',
      text: 'go on',
    });
    expect(next.status).toBe(202);
  });
});
