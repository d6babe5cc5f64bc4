import { narrativeForTurn, type NarratedData } from '@chronicle/adventure';
import { OFFLINE_MODEL } from '@chronicle/llm';
import { referee } from '@chronicle/narrative';
import { QueueName } from '@chronicle/queue';
import {
  act,
  createAdventure,
  finishedStream,
  readEvents,
  startWorkerHarness,
  waitForTurnEnd,
  type WorkerHarness,
} from './testing/context-worker.harness';

// No MODEL_API_KEY: the built-in narrator answers through the same pipeline.
let harness: WorkerHarness;

beforeAll(async () => {
  harness = await startWorkerHarness({ MODEL_API_KEY: '' });
});

afterAll(async () => {
  await harness?.close();
});

describe('the narrate job with the offline narrator', () => {
  it('records a labelled narration whose accepted events pass the referee again', async () => {
    const adventureId = await createAdventure(harness);
    const { turnId, version } = await act(harness, adventureId, 'say', 'Mira, are you up there?');
    const before = await harness.adventures.loadAt(adventureId, version);

    await waitForTurnEnd(harness, adventureId, turnId);
    const events = await readEvents(harness, adventureId);
    expect(events.map((e) => e.type)).toEqual(['AdventureCreated', 'PlayerActed', 'Narrated']);
    const data = events[2].data as NarratedData;
    expect(data.narrator).toBe('offline');
    expect(data.model).toBe(OFFLINE_MODEL);
    expect(data.action.text.length).toBeGreaterThan(0);
    expect(data.action.text).not.toContain('```');
    expect(data.accepted.length).toBeGreaterThan(0);
    const again = referee(narrativeForTurn(before), before.fields.canon, data.accepted);
    expect(again).toEqual({ accepted: data.accepted, rejected: [] });
    expect(data.usage.promptTokens).toBeGreaterThan(0);

    const entries = await finishedStream(harness, turnId);
    expect(entries[entries.length - 1]).toMatchObject({
      event: 'done',
      data: { action: { text: data.action.text, type: 'ai' }, narrator: 'offline' },
    });
  });

  it('queues a memory job with the narration when the memory bank is on, and none when it is off', async () => {
    const off = await createAdventure(harness);
    const offTurn = await act(harness, off, 'do', 'wait');
    await waitForTurnEnd(harness, off, offTurn.turnId);
    const on = await createAdventure(harness, {
      settings: { model: 'fake-model', memoryBankEnabled: true },
    });
    const onTurn = await act(harness, on, 'do', 'wait');
    await waitForTurnEnd(harness, on, onTurn.turnId);

    const queue = harness.producer.queue(QueueName.Memory);
    let jobs = await queue.getJobs(['waiting', 'delayed', 'active', 'completed', 'failed']);
    for (let i = 0; i < 40 && !jobs.some((j) => j.data.adventureId === on); i++) {
      await new Promise((resolve) => setTimeout(resolve, 25));
      jobs = await queue.getJobs(['waiting', 'delayed', 'active', 'completed', 'failed']);
    }
    expect(jobs.map((j) => j.data.adventureId)).toEqual([on]);
  });
});
