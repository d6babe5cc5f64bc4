// A model per job through the real apps: narration goes to one fake OpenAI-compatible server,
// summaries to another with a key and model of their own (SUMMARY_MODEL_*), and the cost ledger
// counts each call under the model that answered it.
import { CHAPTER_SYSTEM_PROMPT, SUMMARY_SYSTEM_PROMPT } from '@chronicle/memory';
import { AppSystem, isAppBuilt } from '@chronicle/testing';
import { startFakeOpenAiServer, type RecordedRequest } from '../support/fake-openai-server';
import { ChronicleClient } from './support/chronicle.client';

jest.setTimeout(120_000);

const CHAT = '/v1/chat/completions';
const describeBuilt = isAppBuilt('memory-worker') ? describe : describe.skip;

// The summary model writes the chapters and folds them into the summary.
const isSummary = (r: RecordedRequest) =>
  [SUMMARY_SYSTEM_PROMPT, CHAPTER_SYSTEM_PROMPT].includes(r.body?.messages?.[0]?.content);

let system: AppSystem;
let summariser: Awaited<ReturnType<typeof startFakeOpenAiServer>>;
let client: ChronicleClient;

beforeAll(async () => {
  summariser = await startFakeOpenAiServer({ instant: true });
  summariser.setDefaultReply(() => ({ text: 'The courier walked the shore.' }));
  system = await AppSystem.start({
    apps: ['api', 'context-worker', 'memory-worker'],
    fake: { instant: true },
    env: {
      MODEL_NAME: 'narrator-model',
      SUMMARY_MODEL_BASE_URL: summariser.baseURL,
      SUMMARY_MODEL_API_KEY: 'summary-key',
      SUMMARY_MODEL_NAME: 'cheap-summariser',
    },
  });
  system.fake.setDefaultReply(() => ({ text: 'The tide turns over the rocks.' }));
  client = new ChronicleClient(system.apiUrl);
});

afterAll(async () => {
  await system?.close();
  await summariser?.close();
});

interface LedgerGroup {
  key: string;
  calls: number;
  promptTokens: number;
}

describeBuilt('a model per job', () => {
  it('sends narration and summaries to their own servers, and the ledger counts each model', async () => {
    await system.explainFailure(async () => {
      const adventureId = await client.createAdventure({
        title: 'Shore',
        opening: 'You stand on the shore below the lighthouse.',
        settings: { autoSummarize: true, memoryBankEnabled: false },
      });
      // The first chapter is due once the story holds 24 short actions: 12 turns hold 25.
      for (let turn = 1; turn <= 12; turn++) {
        const played = await client.play(adventureId, 'do', `walk to mark ${turn}`);
        expect(played.stream.outcome).toBe('done');
      }
      const deadline = Date.now() + 30_000;
      while (summariser.requestsTo(CHAT).length === 0 && Date.now() < deadline) {
        await new Promise((resolve) => setTimeout(resolve, 100));
      }

      // Summaries reached only the summariser, with its key and model.
      const summaries = summariser.requestsTo(CHAT);
      expect(summaries.length).toBeGreaterThan(0);
      expect(summaries.every(isSummary)).toBe(true);
      expect(summaries.every((r) => r.body.model === 'cheap-summariser')).toBe(true);
      expect(summaries.every((r) => r.headers.authorization === 'Bearer summary-key')).toBe(true);
      const main = system.fake.requestsTo(CHAT);
      expect(main.some(isSummary)).toBe(false);
      // Narrations reached the main server, under the narration's model and key.
      const narrations = main.filter((r) => r.body?.stream === true);
      expect(narrations).toHaveLength(12);
      expect(narrations.every((r) => r.body.model === 'narrator-model')).toBe(true);
      expect(narrations.every((r) => r.headers.authorization === 'Bearer test-key')).toBe(true);

      // The ledger counts each call under its own model (memories, written with the summary's
      // pass, went to the main server under the adventure's model).
      const calls = (server: typeof summariser, model: string) =>
        server.requestsTo(CHAT).filter((r) => r.body.model === model).length;
      let byModel = new Map<string, LedgerGroup>();
      const counted = () =>
        byModel.get('narrator-model')?.calls === calls(system.fake, 'narrator-model') &&
        byModel.get('cheap-summariser')?.calls === calls(summariser, 'cheap-summariser');
      while (Date.now() < deadline) {
        const { body } = await client.expect<{ groups: LedgerGroup[] }>(
          200,
          'GET',
          '/v1/usage?groupBy=model',
        );
        byModel = new Map(body.groups.map((g) => [g.key, g]));
        if (counted()) break;
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
      expect(Object.fromEntries([...byModel].map(([key, g]) => [key, g.calls]))).toMatchObject({
        'narrator-model': calls(system.fake, 'narrator-model'),
        'cheap-summariser': summaries.length,
      });
      expect(byModel.get('narrator-model')!.calls).toBeGreaterThanOrEqual(8);
      expect(byModel.get('cheap-summariser')!.promptTokens).toBeGreaterThan(0);
    });
  });
});
