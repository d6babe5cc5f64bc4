import type { NarratedData } from '@chronicle/adventure';
import { buildTurnContext, contextManifest } from '@chronicle/adventure-store';
import {
  act,
  createAdventure,
  readEvents,
  setUpNarrateSpec,
  waitForTurnEnd,
} from './testing/context-worker.harness';

// The prompt cache end to end: the worker's requests carry the adventure's cache key and
// breakpoints, and the cached tokens the provider reports reach the Narrated event.

const spec = setUpNarrateSpec({
  fake: { instant: true },
  env: { MODEL_PROMPT_CACHE_KEY: 'true', MODEL_CACHE_CONTROL: 'true' },
});

const OPENING =
  `You stand on the harbor wall at dusk. ${'The lamp above has gone dark. '.repeat(170)}`.trim();

async function turn(adventureId: string, text: string): Promise<NarratedData> {
  const { turnId } = await act(spec.harness, adventureId, 'do', text);
  await waitForTurnEnd(spec.harness, adventureId, turnId);
  const events = await readEvents(spec.harness, adventureId);
  return events[events.length - 1].data as NarratedData;
}

describe('prompt caching through the context worker', () => {
  it("sends the adventure's cache key and breakpoints, and records the cached tokens served", async () => {
    // Given a stable adventure whose opening fills a block of its 2,048-token budget
    const adventureId = await createAdventure(spec.harness, {
      opening: OPENING,
      settings: { model: 'fake-model', contextTokenBudget: 2048, historyMode: 'stable' },
    });
    // When two turns are narrated
    const first = await turn(adventureId, 'climb the stairs');
    const second = await turn(adventureId, 'light the lamp');

    const requests = spec.fake.requestsTo('/v1/chat/completions');
    expect(requests).toHaveLength(2);
    // Then each request is keyed by the adventure
    expect(requests.map((r) => r.body.prompt_cache_key)).toEqual([adventureId, adventureId]);
    // and marks the system block's end and the history's newest block start (after the opening)
    const [system, user] = requests[1].body.messages;
    expect(system.content).toEqual([
      expect.objectContaining({ cache_control: { type: 'ephemeral' } }),
    ]);
    expect(user.content[0]).toMatchObject({ cache_control: { type: 'ephemeral' } });
    expect(user.content[0].text).toBe(`${OPENING}\n\n`);
    // and the second turn's shared prefix is served from the cache and recorded on its event
    expect(first.usage.cachedTokens).toBe(0);
    expect(second.usage.cachedTokens).toBeGreaterThanOrEqual(1024);
    expect(second.usage.cachedTokens % 128).toBe(0);
    expect(spec.fake.cacheTotals.cachedTokens).toBe(second.usage.cachedTokens);
    // and the stored manifest says what the next request can expect
    expect(second.contextManifest).toMatchObject({
      cache: { historyMode: 'stable', blockTokens: 512, blockAligned: true },
    });
  });

  it('rebuilds every prompt of a replay byte for byte from the log alone, across moves of the start', async () => {
    // Given a stable adventure played past its budget, so its window's start moved
    spec.fake.setDefaultReply({
      text: `The tide climbs the black rocks. ${'The lamp turns slowly overhead. '.repeat(40)}`,
    });
    const adventureId = await createAdventure(spec.harness, {
      settings: { model: 'fake-model', contextTokenBudget: 2048, historyMode: 'stable' },
    });
    for (let step = 1; step <= 10; step++) await turn(adventureId, `walk on, step ${step}`);
    spec.fake.setDefaultReply(undefined);

    // When each narrated turn's prompt is rebuilt from the projection at its player's action
    const events = await readEvents(spec.harness, adventureId);
    const narrated = events.filter((e) => e.type === 'Narrated');
    const starts = new Set<number>();
    for (const event of narrated) {
      const data = event.data as NarratedData;
      const before = await spec.harness.adventures.loadAt(adventureId, event.version - 1);
      const rebuilt = contextManifest(
        await buildTurnContext(spec.harness.adventures, before, { defaultModel: 'fake-model' }),
      );
      // Then it hashes to the prompt that was sent, with no event beyond the story's own
      expect(rebuilt.sha256).toEqual((data.contextManifest as { sha256: unknown }).sha256);
      starts.add(rebuilt.history.total - rebuilt.history.included);
    }
    expect(narrated).toHaveLength(10);
    expect(starts.size).toBeGreaterThan(2);
  });
});
