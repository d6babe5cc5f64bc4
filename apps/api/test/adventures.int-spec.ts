import { LIMITS } from '@chronicle/adventure';
import { aScenario, startApiHarness, type ApiHarness } from './api.harness';

let api: ApiHarness;

beforeAll(async () => {
  api = await startApiHarness();
});

afterAll(async () => {
  await api?.close();
});

describe('POST /v1/adventures', () => {
  it('creates an adventure with its placeholders answered, and GET shows the projection', async () => {
    const created = await api.request('POST', '/v1/adventures', aScenario());
    expect(created.status).toBe(201);
    expect(created.body).toEqual({ id: expect.any(String), version: 1 });

    const read = await api.request('GET', `/v1/adventures/${created.body.id}`);
    expect(read.status).toBe(200);
    expect(read.body).toMatchObject({
      id: created.body.id,
      version: 1,
      title: 'The Drowned Bell',
      storySummary: '',
      narrativeState: { entities: {}, facts: [] },
      turnInFlight: null,
      total: 1,
      more: false,
      settings: { temperature: 0.7, maxOutputTokens: 800 },
      storyCards: [
        { name: 'Old Tom', keys: 'tom, ferryman', type: 'other', id: expect.any(String) },
      ],
    });
    expect(read.body.actions).toEqual([
      expect.objectContaining({
        type: 'start',
        text: 'You are Mira, the last bell-ringer of Hollowmere.',
      }),
    ]);
    expect(read.body.head).toBe(read.body.actions[0].id);
  });

  it('refuses a missing placeholder answer by name and appends nothing', async () => {
    const before = await api.request('GET', '/v1/adventures?limit=200');
    const reply = await api.request(
      'POST',
      '/v1/adventures',
      aScenario({ opening: 'You are ${Name} of ${Town}.', placeholders: { Name: 'Mira' } }),
    );
    expect(reply.status).toBe(400);
    expect(reply.body.message).toContain('"Town"');
    const after = await api.request('GET', '/v1/adventures?limit=200');
    expect(after.body.adventures).toHaveLength(before.body.adventures.length);
  });

  it('accepts a persona with a name alone (each field is optional), and a missing field is empty', async () => {
    const created = await api.request(
      'POST',
      '/v1/adventures',
      aScenario({ persona: { name: 'Mira' } }),
    );
    expect(created.status).toBe(201);
    const read = await api.request('GET', `/v1/adventures/${created.body.id}`);
    expect(read.body.persona).toEqual({ name: 'Mira', pronouns: '', description: '' });

    const edited = await api.request('PATCH', `/v1/adventures/${created.body.id}`, {
      persona: { pronouns: 'she/her' },
    });
    expect(edited.status).toBe(200);
    const after = await api.request('GET', `/v1/adventures/${created.body.id}`);
    expect(after.body.persona).toEqual({ name: '', pronouns: 'she/her', description: '' });
  });

  it('names every field to fix: unknown fields, __proto__, bad types, over-long text', async () => {
    const reply = await api.request(
      'POST',
      '/v1/adventures',
      '{"title": 5, "opening": "x", "colour": "red", "persona": {"name": "a", "pronouns": "b", "description": "c", "age": 3}}',
    );
    expect(reply.status).toBe(400);
    const message = (reply.body.message as string[]).join('\n');
    expect(message).toContain('property colour should not exist');
    expect(message).toContain('persona.property age should not exist');
    expect(message).toContain('title must be a string');

    for (const body of [
      '{"title": "t", "opening": "o", "__proto__": {"admin": true}}',
      '{"title": "t", "opening": "o", "persona": {"__proto__": {"name": "x"}}}',
    ]) {
      const proto = await api.request('POST', '/v1/adventures', body);
      expect(proto.status).toBe(400);
      expect(proto.body.message).toEqual(['property __proto__ should not exist; remove it']);
    }
    expect(({} as { admin?: boolean }).admin).toBeUndefined();

    const long = await api.request(
      'POST',
      '/v1/adventures',
      aScenario({ plotEssentials: 'x'.repeat(LIMITS.proseChars + 1) }),
    );
    expect(long.status).toBe(400);
    expect(long.body.message).toEqual([
      `plotEssentials is too long; keep it to ${LIMITS.proseChars} characters`,
    ]);
  });

  it('refuses NUL bytes, lone surrogates and unknown settings with a message', async () => {
    const nul = await api.request('POST', '/v1/adventures', aScenario({ title: 'a\u0000b' }));
    expect(nul.status).toBe(400);
    expect(nul.body.message).toMatch(/NUL/);
    const surrogate = await api.request(
      'POST',
      '/v1/adventures',
      '{"title": "ok", "opening": "a \\ud800 b"}',
    );
    expect(surrogate.status).toBe(400);
    expect(surrogate.body.message).toMatch(/unicode/);
    const range = await api.request(
      'POST',
      '/v1/adventures',
      aScenario({ settings: { temperature: 9 } }),
    );
    expect(range.status).toBe(400);
    expect(range.body.message).toBe('settings.temperature must be between 0 and 5');
  });

  it('answers 413 for a body over the limit and 400 for broken JSON', async () => {
    const huge = await api.request(
      'POST',
      '/v1/adventures',
      aScenario({ plotEssentials: 'x'.repeat(LIMITS.bodyBytes + 10) }),
    );
    expect(huge.status).toBe(413);
    expect(huge.body).toMatchObject({ statusCode: 413, error: 'Payload Too Large' });
    const broken = await api.request('POST', '/v1/adventures', '{"title": ');
    expect(broken.status).toBe(400);
    expect(broken.body.message).toMatch(/not valid JSON/);
  });

  it('404s an unknown adventure', async () => {
    const reply = await api.request('GET', '/v1/adventures/4b0f6f43-64c6-4a53-9b7a-7a2f0d0b7a11');
    expect(reply).toMatchObject({ status: 404, body: { statusCode: 404, error: 'Not Found' } });
  });
});

describe('fields, cards and the list', () => {
  it('edits fields, adds, edits and removes a story card, and pages the list', async () => {
    const { body } = await api.request('POST', '/v1/adventures', aScenario());
    const id = body.id as string;
    const edited = await api.request('PATCH', `/v1/adventures/${id}`, {
      title: 'The Risen Bell',
      settings: { maxOutputTokens: 400 },
    });
    expect(edited).toMatchObject({ status: 200, body: { id, version: 2 } });
    const unchanged = await api.request('PATCH', `/v1/adventures/${id}`, {
      title: 'The Risen Bell',
    });
    expect(unchanged.body.version).toBe(2);

    const added = await api.request('POST', `/v1/adventures/${id}/story-cards`, {
      id: 'card-wren',
      name: 'Wren',
      keys: 'wren',
      entry: 'A heron that talks.',
    });
    expect(added.status).toBe(201);
    expect(added.body.card).toMatchObject({ id: 'card-wren', type: 'other', notes: '' });
    const duplicate = await api.request('POST', `/v1/adventures/${id}/story-cards`, {
      id: 'card-wren',
      name: 'Wren',
    });
    expect(duplicate.status).toBe(409);
    const cardEdit = await api.request('PATCH', `/v1/adventures/${id}/story-cards/card-wren`, {
      entry: 'A heron that lies.',
    });
    expect(cardEdit.body.card.entry).toBe('A heron that lies.');
    const removed = await api.request('DELETE', `/v1/adventures/${id}/story-cards/card-wren`);
    expect(removed.status).toBe(200);
    const missing = await api.request('DELETE', `/v1/adventures/${id}/story-cards/card-wren`);
    expect(missing.status).toBe(404);

    const read = await api.request('GET', `/v1/adventures/${id}`);
    expect(read.body).toMatchObject({
      title: 'The Risen Bell',
      settings: { maxOutputTokens: 400 },
    });
    expect(read.body.storyCards.map((c: { name: string }) => c.name)).toEqual(['Old Tom']);

    const first = await api.request('GET', '/v1/adventures?limit=1');
    expect(first.body.adventures).toHaveLength(1);
    expect(first.body.next).toEqual(first.body.adventures[0].id);
    const second = await api.request('GET', `/v1/adventures?limit=1&after=${first.body.next}`);
    expect(second.body.adventures[0].id > first.body.next).toBe(true);
    const badLimit = await api.request('GET', '/v1/adventures?limit=100000');
    expect(badLimit.status).toBe(400);
  });

  it('serves the event log paged and the projection at a version', async () => {
    const { body } = await api.request('POST', '/v1/adventures', aScenario());
    const id = body.id as string;
    await api.request('PATCH', `/v1/adventures/${id}`, { title: 'Second' });
    await api.request('PATCH', `/v1/adventures/${id}`, { title: 'Third' });
    const page = await api.request('GET', `/v1/adventures/${id}/events?after=1&limit=1`);
    expect(page.body.events).toEqual([
      expect.objectContaining({ version: 2, type: 'AdventureEdited', data: { title: 'Second' } }),
    ]);
    expect(page.body.next).toBe(2);
    const at = await api.request('GET', `/v1/adventures/${id}/at/2`);
    expect(at.body).toMatchObject({ version: 2, projection: { fields: { title: 'Second' } } });
    const beyond = await api.request('GET', `/v1/adventures/${id}/at/9`);
    expect(beyond.status).toBe(404);
    const notNumber = await api.request('GET', `/v1/adventures/${id}/at/two`);
    expect(notNumber.status).toBe(400);
  });
});

describe('operations', () => {
  it('GET /health is 200 with both services up', async () => {
    const reply = await api.request('GET', '/health');
    expect(reply).toMatchObject({
      status: 200,
      body: { status: 'ok', postgres: 'up', redis: 'up' },
    });
  });

  it('serves the docs page and an OpenAPI document listing the routes with their bodies', async () => {
    const page = await fetch(`${api.baseUrl}/docs`);
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toContain('text/html');
    const doc = await api.request('GET', '/docs/json');
    const paths = Object.keys(doc.body.paths);
    for (const path of [
      '/v1/adventures',
      '/v1/adventures/{id}',
      '/v1/adventures/{id}/actions',
      '/v1/adventures/{id}/turns/{turnId}',
      '/v1/adventures/{id}/turns/{turnId}/stream',
      '/v1/adventures/{id}/turns/{turnId}/cancel',
      '/v1/adventures/{id}/retry',
      '/v1/adventures/{id}/undo',
      '/v1/adventures/{id}/redo',
      '/v1/adventures/{id}/head',
      '/v1/adventures/{id}/actions/{actionId}',
      '/v1/adventures/{id}/story-cards',
      '/v1/adventures/{id}/story-cards/{cardId}',
      '/v1/adventures/{id}/narrative-state',
      '/v1/adventures/{id}/narrative-state/retcons',
      '/v1/adventures/{id}/context',
      '/v1/adventures/{id}/context/preview',
      '/v1/adventures/{id}/context/prompt',
      '/v1/adventures/{id}/events',
      '/v1/adventures/{id}/at/{version}',
      '/v1/admin/workers',
      '/health',
    ]) {
      expect(paths).toContain(path);
    }
    const create = doc.body.paths['/v1/adventures'].post.requestBody.content['application/json'];
    expect(create.schema.$ref).toBe('#/components/schemas/CreateAdventureDto');
    expect(Object.keys(doc.body.components.schemas.CreateAdventureDto.properties)).toEqual(
      expect.arrayContaining([
        'title',
        'opening',
        'placeholders',
        'storyCards',
        'canon',
        'settings',
      ]),
    );
  });

  it('GET /v1/admin/workers answers with the workers that reply to the roll call', async () => {
    const reply = await api.request('GET', '/v1/admin/workers');
    expect(reply.status).toBe(200);
    // No worker runs in this test; the API itself never answers a roll call.
    expect(reply.body).toEqual([]);
  });
});
