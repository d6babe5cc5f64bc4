import { narrativeForTurn, type NarratedData } from '@chronicle/adventure';
import { OFFLINE_MODEL } from '@chronicle/llm';
import { referee } from '@chronicle/narrative';
import { QueueName } from '@chronicle/queue';
import {
  act,
  createAdventure,
  finishedStream,
  readEvents,
  setUpNarrateSpec,
  waitForTurnEnd,
} from './testing/context-worker.harness';

// No MODEL_API_KEY: the built-in narrator answers through the same pipeline.
const spec = setUpNarrateSpec({ fake: false });

describe('the narrate job with the offline narrator', () => {
  it('records a labelled narration whose accepted events pass the referee again', async () => {
    const adventureId = await createAdventure(spec.harness);
    const { turnId, version } = await act(
      spec.harness,
      adventureId,
      'say',
      'Mira, are you up there?',
    );
    const before = await spec.harness.adventures.loadAt(adventureId, version);

    await waitForTurnEnd(spec.harness, adventureId, turnId);
    const events = await readEvents(spec.harness, adventureId);
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

    const entries = await finishedStream(spec.harness, turnId);
    expect(entries[entries.length - 1]).toMatchObject({
      event: 'done',
      data: { action: { text: data.action.text, type: 'ai' }, narrator: 'offline' },
    });
  });

  it('queues a memory job with the narration when the memory bank is on, and none when it is off', async () => {
    const off = await createAdventure(spec.harness);
    const offTurn = await act(spec.harness, off, 'do', 'wait');
    await waitForTurnEnd(spec.harness, off, offTurn.turnId);
    const on = await createAdventure(spec.harness, {
      settings: { model: 'fake-model', memoryBankEnabled: true },
    });
    const onTurn = await act(spec.harness, on, 'do', 'wait');
    await waitForTurnEnd(spec.harness, on, onTurn.turnId);

    const queue = spec.harness.producer.queue(QueueName.Memory);
    let jobs = await queue.getJobs(['waiting', 'delayed', 'active', 'completed', 'failed']);
    for (let i = 0; i < 40 && !jobs.some((j) => j.data.adventureId === on); i++) {
      await new Promise((resolve) => setTimeout(resolve, 25));
      jobs = await queue.getJobs(['waiting', 'delayed', 'active', 'completed', 'failed']);
    }
    expect(jobs.map((j) => j.data.adventureId)).toEqual([on]);
  });
});
