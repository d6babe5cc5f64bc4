import { LIMITS } from '@chronicle/adventure';
import {
  base64Json,
  characterCardV2,
  novelAiLorebook,
  pngWithText,
  risuLorebook,
  sillyTavernWorld,
} from '@chronicle/lore/testing';
import { aScenario, startApiHarness, type ApiHarness } from './api.harness';

// The story-card lore routes over HTTP, on the real API, Postgres and Redis.

let api: ApiHarness;

beforeAll(async () => {
  api = await startApiHarness();
});

afterAll(async () => {
  await api?.close();
});

async function anAdventure(): Promise<string> {
  const created = await api.request('POST', '/v1/adventures', aScenario());
  expect(created.status).toBe(201);
  return created.body.id as string;
}

const send = (path: string, body: Buffer, contentType = 'application/octet-stream') =>
  fetch(`${api.baseUrl}${path}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${api.apiKey}`, 'content-type': contentType },
    body,
  });

describe('POST /v1/adventures/:id/story-cards/import', () => {
  it('imports a SillyTavern world as one event, reports what it keeps only verbatim, and exports it back unchanged', async () => {
    const id = await anAdventure();
    const file = JSON.stringify(sillyTavernWorld());
    const imported = await api.request('POST', `/v1/adventures/${id}/story-cards/import`, file);
    expect(imported.status).toBe(200);
    expect(imported.body).toMatchObject({
      format: 'sillytavern',
      imported: 7,
      skipped: 0,
      version: 2,
      report: {
        keptOnlyVerbatim: [{ card: 'Captain', features: ['vectorized'] }],
        badRegexes: [{ card: 'Bad regex', key: '/(a+)+$/' }],
        unknownMacros: [{ card: 'Bad regex', macros: ['{{time}}'] }],
      },
    });
    const log = await api.request('GET', `/v1/adventures/${id}/events?after=1`);
    expect(log.body.events.map((e: { type: string }) => e.type)).toEqual(['StoryCardsImported']);

    const read = await api.request('GET', `/v1/adventures/${id}`);
    expect(read.body.storyCards).toHaveLength(8);
    expect(read.body.storyCards[1]).toMatchObject({
      name: 'Harbour',
      keySyntax: 'lines',
      origin: { format: 'sillytavern', bookId: imported.body.bookId },
    });
    expect(read.body.storyCards[1].origin.raw).toBeUndefined();

    const exported = await api.request(
      'GET',
      `/v1/adventures/${id}/story-cards/export?format=sillytavern`,
    );
    expect(exported.status).toBe(200);
    // The adventure's own native card joins the book as a new entry; the imported ones are as sent.
    const { entries, ...book } = exported.body;
    expect(book).toEqual({ name: 'Harbour Town', extensions: { chronicle_test: true } });
    for (const [uid, entry] of Object.entries(sillyTavernWorld().entries)) {
      expect(entries[uid]).toEqual(entry);
    }
    expect(entries['7']).toMatchObject({ comment: 'Old Tom', key: ['tom', 'ferryman'] });
    expect(JSON.parse(exported.headers.get('chronicle-lore-warnings')!)).toEqual([]);
    expect(exported.headers.get('content-disposition')).toMatch(/world\.json/);

    const aid = await api.request('GET', `/v1/adventures/${id}/story-cards/export?format=aid`);
    expect(JSON.parse(aid.headers.get('chronicle-lore-warnings')!)).toEqual(
      expect.arrayContaining([
        'secondary-key conditions: 1 card',
        'AI Dungeon replaces every story card on import',
      ]),
    );
  });

  it('fires the imported cards in the context: the always-on entry in the static block, with the report saying why', async () => {
    const id = await anAdventure();
    await api.request(
      'POST',
      `/v1/adventures/${id}/story-cards/import`,
      JSON.stringify(sillyTavernWorld()),
    );
    const preview = await api.request('POST', `/v1/adventures/${id}/context/preview`);
    expect(preview.status).toBe(200);
    const report = preview.body.report ?? preview.body;
    const sections = report.sections as { label: string; text: string }[];
    expect(sections.find((s) => s.label === 'static_lore')?.text).toBe(
      'World Lore: Write in short, salt-stung sentences.',
    );
    expect(report.cards).toEqual(
      expect.arrayContaining([
        expect.objectContaining({
          name: 'Style',
          reason: 'always',
          placement: 'static',
          included: true,
        }),
      ]),
    );
  });

  it('an adventure holding an imported book moves: its export imports elsewhere, cards and source kept', async () => {
    const id = await anAdventure();
    await api.request(
      'POST',
      `/v1/adventures/${id}/story-cards/import`,
      JSON.stringify(sillyTavernWorld()),
    );
    const log = await fetch(`${api.baseUrl}/v1/adventures/${id}/export`, {
      headers: { authorization: `Bearer ${api.apiKey}` },
    });
    expect(log.status).toBe(200);
    const moved = await api.request('POST', '/v1/adventures/import', await log.text(), {
      'content-type': 'application/x-ndjson',
    });
    expect(moved.status).toBe(201);
    const copy = moved.body.adventureId ?? moved.body.id;
    const exported = await api.request(
      'GET',
      `/v1/adventures/${copy}/story-cards/export?format=sillytavern`,
    );
    expect(exported.body.entries['3']).toEqual(sillyTavernWorld().entries['3']);
  });

  it('reads a PNG character card, replacing the cards with mode=replace', async () => {
    const id = await anAdventure();
    const png = pngWithText({ chara: base64Json(characterCardV2()) });
    const response = await send(
      `/v1/adventures/${id}/story-cards/import?mode=replace`,
      png,
      'image/png',
    );
    expect(response.status).toBe(200);
    expect(await response.json()).toMatchObject({ format: 'ccv2', imported: 3 });
    const read = await api.request('GET', `/v1/adventures/${id}`);
    expect(read.body.storyCards.map((c: { name: string }) => c.name)).toEqual([
      'Lamp oil',
      'Keeper',
      'Rations',
    ]);
  });

  it('answers a malformed file with a 400 naming the problem, and writes nothing', async () => {
    const id = await anAdventure();
    const cases: [Buffer, RegExp][] = [
      [Buffer.from('{"entries": '), /not valid JSON/],
      [pngWithText({ Comment: 'x' }), /no "chara", "ccv3" or "naidata" text chunk/],
      [Buffer.from('{"hello": 1}'), /name one with \?format=/],
      [Buffer.from('{"storyContainerVersion": 1, "content": {}}'), /holds no lorebook/],
    ];
    const agnai = await send(
      `/v1/adventures/${id}/story-cards/import?format=agnai`,
      Buffer.from('{"kind": "memory", "entries": {}}'),
    );
    expect(agnai.status).toBe(400);
    expect(((await agnai.json()) as { message: string }).message).toMatch(/Agnai memory book/);
    for (const [body, message] of cases) {
      const response = await send(`/v1/adventures/${id}/story-cards/import`, body);
      expect(response.status).toBe(400);
      expect(((await response.json()) as { message: string }).message).toMatch(message);
    }
    const bad = await api.request(
      'POST',
      `/v1/adventures/${id}/story-cards/import?format=word`,
      '[]',
    );
    expect(bad.status).toBe(400);
    const read = await api.request('GET', `/v1/adventures/${id}`);
    expect(read.body.version).toBe(1);
  });

  it('imports a Risu lorebook and a NovelAI lorebook image, and exports their cards to SillyTavern', async () => {
    const id = await anAdventure();
    const risu = await api.request(
      'POST',
      `/v1/adventures/${id}/story-cards/import`,
      JSON.stringify(risuLorebook()),
    );
    expect(risu.status).toBe(200);
    expect(risu.body).toMatchObject({ format: 'risu', imported: 3, skipped: 1 });
    const image = await send(
      `/v1/adventures/${id}/story-cards/import`,
      pngWithText({ naidata: base64Json(novelAiLorebook()) }),
    );
    expect(image.status).toBe(200);
    expect(await image.json()).toMatchObject({ format: 'novelai', imported: 3 });
    const exported = await api.request(
      'GET',
      `/v1/adventures/${id}/story-cards/export?format=sillytavern`,
    );
    expect(exported.status).toBe(200);
    const comments = Object.values(
      exported.body.entries as Record<string, { comment: string }>,
    ).map((entry) => entry.comment);
    expect(comments).toEqual(expect.arrayContaining(['Bell', 'Wreck', 'Rules']));
  });

  it("given the README's curl example (--data-binary sends application/x-www-form-urlencoded), then the file is imported; a multipart form is a 415 saying what to send", async () => {
    const id = await anAdventure();
    const file = Buffer.from(JSON.stringify(sillyTavernWorld()));
    const path = `/v1/adventures/${id}/story-cards/import`;
    const curl = await send(path, file, 'application/x-www-form-urlencoded');
    expect(curl.status).toBe(200);
    expect(((await curl.json()) as { format: string }).format).toBe('sillytavern');
    const untyped = await fetch(`${api.baseUrl}${path}?mode=replace`, {
      method: 'POST',
      headers: { authorization: `Bearer ${api.apiKey}` },
      body: file,
    });
    expect(untyped.status).toBe(200);
    const before = (await api.request('GET', `/v1/adventures/${id}/events`)).body;
    const form = await send(path, file, 'multipart/form-data; boundary=x');
    expect(form.status).toBe(415);
    expect(((await form.json()) as { message: string }).message).toMatch(
      /Content-Type multipart\/form-data; boundary=x is not accepted here; send the body as the lore file itself, not a form \(curl --data-binary @file/,
    );
    expect((await api.request('GET', `/v1/adventures/${id}/events`)).body).toEqual(before);
  });

  it('refuses a file over the size limit with 413', async () => {
    const id = await anAdventure();
    const response = await send(
      `/v1/adventures/${id}/story-cards/import`,
      Buffer.alloc(LIMITS.loreFileBytes + 1, 32),
    );
    expect(response.status).toBe(413);
  });
});

describe('PATCH /v1/adventures/:id/story-cards/:cardId with the lore fields', () => {
  it('sets and resets them, and refuses a bad one by name', async () => {
    const id = await anAdventure();
    const read = await api.request('GET', `/v1/adventures/${id}`);
    const cardId = read.body.storyCards[0].id as string;
    const path = `/v1/adventures/${id}/story-cards/${cardId}`;
    const edited = await api.request('PATCH', path, {
      priority: 250,
      activation: 'always',
      conditions: [{ mode: 'anyOf', keys: ['river'] }],
      placement: { kind: 'depth', depth: 2, role: 'system' },
    });
    expect(edited.status).toBe(200);
    expect(edited.body.card).toMatchObject({
      priority: 250,
      activation: 'always',
      placement: { depth: 2 },
    });
    const reset = await api.request('PATCH', path, { placement: null });
    expect(reset.body.card.placement).toBeUndefined();
    const bad = await api.request('PATCH', path, { scan: { messages: 2 } });
    expect(bad.status).toBe(400);
    expect(bad.body.message).toMatch(/card\.scan\.messages is not a field of card\.scan/);
    const wrong = await api.request('PATCH', path, { activation: 'sometimes' });
    expect(wrong.status).toBe(400);
  });
});

describe('POST /v1/adventures with a book of cards', () => {
  it('refuses bad cards with a 400 naming each card and field, and creates nothing', async () => {
    const before = await api.request('GET', '/v1/adventures');
    const cards = [
      { name: 'Fine', keys: 'fine', entry: 'ok' },
      { name: 'Ranked', priority: 'high' },
      { name: 'Extra', mood: 'grim' },
      { keys: 'nameless' },
      'not a card',
      { name: 'Windowed', scan: { messages: 2 } },
    ];
    const refused = await api.request('POST', '/v1/adventures', {
      ...aScenario(),
      storyCards: cards,
    });
    expect(refused.status).toBe(400);
    const message = JSON.stringify(refused.body.message);
    expect(message).toMatch(/storyCards\[1\]\.priority must be an integer/);
    expect(message).toMatch(/storyCards\[2\]\.mood is not a story card field/);
    expect(message).toMatch(/storyCards\[3\]\.name is missing/);
    expect(message).toMatch(/storyCards\[4\] must be an object/);
    expect(message).toMatch(/storyCards\[5\]\.scan\.messages is not a field of card\.scan/);
    expect(message).not.toMatch(/storyCards\[0\]/);
    const after = await api.request('GET', '/v1/adventures');
    expect(after.body).toEqual(before.body);
  });

  it(`creates an adventure holding ${LIMITS.storyCardsPerAdventure} cards, every field kept`, async () => {
    const cards = Array.from({ length: LIMITS.storyCardsPerAdventure }, (_, i) => ({
      name: `Card ${i}`,
      keys: `k${i}\nkeeper ${i}`,
      keySyntax: 'lines',
      entry: `Entry ${i}.`,
      priority: i % 300,
      ...(i % 100 === 0 && { conditions: [{ mode: 'anyOf', keys: ['bell'] }] }),
    }));
    const created = await api.request('POST', '/v1/adventures', {
      ...aScenario(),
      storyCards: cards,
    });
    expect(created.status).toBe(201);
    const read = await api.request('GET', `/v1/adventures/${created.body.id}`);
    expect(read.body.storyCards).toHaveLength(LIMITS.storyCardsPerAdventure);
    expect(read.body.storyCards[4200]).toMatchObject({
      name: 'Card 4200',
      keys: 'k4200\nkeeper 4200',
      keySyntax: 'lines',
      priority: 0,
      conditions: [{ mode: 'anyOf', keys: ['bell'] }],
      type: 'other',
      notes: '',
    });
  }, 60_000);
});
