// @chronicle/client as a bot uses it: typed calls against the real apps (the API and a context
// worker, narrating from the fake model server), and the turn stream followed to its end.
import { createChronicleClient, type ReceivedFrame } from '@chronicle/client';
import { AppSystem, isAppBuilt } from '@chronicle/testing';

jest.setTimeout(90_000);

const describeBuilt = isAppBuilt('context-worker') ? describe : describe.skip;

let system: AppSystem;

beforeAll(async () => {
  system = await AppSystem.start({ fake: { instant: true } });
  system.fake.setDefaultReply(() => ({ text: 'The bell answers from under the lake.' }));
});
afterAll(() => system?.close());

describeBuilt('@chronicle/client', () => {
  it('creates an adventure, plays a turn and follows its stream, with typed answers', async () => {
    const { api, followTurn } = createChronicleClient({
      baseUrl: system.apiUrl,
      apiKey: system.apiKey,
    });

    const created = await api.POST('/v1/adventures', {
      body: { title: 'Bell', opening: 'You stand by the drowned bell.' },
    });
    expect(created.response.status).toBe(201);
    const id = created.data!.id;

    const accepted = await api.POST('/v1/adventures/{id}/actions', {
      params: { path: { id } },
      body: { type: 'do', text: 'ring the bell' },
    });
    expect(accepted.response.status).toBe(202);
    const frames: ReceivedFrame[] = [];
    const last = await followTurn(accepted.data!.stream, {
      onFrame: (frame) => frames.push(frame),
      signal: AbortSignal.timeout(30_000),
    });
    expect(last?.event).toBe('done');
    const text = frames.map((frame) => (frame.event === 'chunk' ? frame.data.text : '')).join('');
    expect(text).toContain('The bell answers');

    const view = await api.GET('/v1/adventures/{id}', {
      params: { path: { id }, query: { limit: 10 } },
    });
    expect(view.data!.actions.map((action) => action.type)).toEqual(['start', 'do', 'ai']);
    expect(view.data!.turnInFlight).toBeNull();
  });

  it('answers a refusal with the response and no data', async () => {
    const { api } = createChronicleClient({ baseUrl: system.apiUrl, apiKey: 'chr_wrong' });
    const refused = await api.GET('/v1/adventures');
    expect(refused.response.status).toBe(401);
    expect(refused.data).toBeUndefined();
  });
});
