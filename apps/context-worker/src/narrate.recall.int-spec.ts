import { randomUUID } from 'node:crypto';
import type { NarratedData } from '@chronicle/adventure';
import { narrationCommand } from '@chronicle/adventure/testing';
import type { ContextManifest } from '@chronicle/adventure-store';
import {
  act,
  createAdventure,
  readEvents,
  setUpNarrateSpec,
  waitForTurnEnd,
} from './testing/context-worker.harness';

const FACT = 'The keeper hid the silver key beneath the third stone of the chapel floor.';

const spec = setUpNarrateSpec();

describe('a turn recalls an old passage of the story into its prompt', () => {
  it('given a fact forty turns back, when the player asks about it, then the narration holding it is in the prompt the model gets, cited with its scores', async () => {
    const { harness } = spec;
    const adventureId = await createAdventure(harness, {
      settings: { model: 'fake-model', memoryBankEnabled: true, contextTokenBudget: 1500 },
    });
    const meta = { actor: 'test' };
    const played = async (action: string, narration: string) => {
      const turnId = randomUUID();
      const aiActionId = randomUUID();
      await harness.adventures.handle(
        adventureId,
        {
          type: 'SubmitAction',
          data: { turnId, inputType: 'do', text: action, actionId: randomUUID() },
        },
        meta,
      );
      await harness.adventures.handle(
        adventureId,
        narrationCommand(turnId, aiActionId, { text: narration }),
        meta,
      );
      return aiActionId;
    };
    const factId = await played('Ask the sexton about the keeper', FACT);
    for (let i = 0; i < 40; i++) {
      await played(
        `Walk along corridor ${i}`,
        `Rain drums on the roof as you pass door ${i} of the long hall.`,
      );
    }

    const { turnId } = await act(
      harness,
      adventureId,
      'do',
      'Where did the keeper hide the silver key?',
    );
    await waitForTurnEnd(harness, adventureId, turnId);

    const prompt = JSON.stringify(
      spec.fake.requestsTo('/v1/chat/completions').at(-1)?.body.messages,
    );
    expect(prompt).toContain(FACT);
    const events = await readEvents(harness, adventureId);
    const narrated = events.filter((e) => e.type === 'Narrated').at(-1)!.data as NarratedData;
    const manifest = narrated.contextManifest as unknown as ContextManifest;
    expect(manifest.passages?.used.find((p) => p.actionId === factId)).toEqual(
      expect.objectContaining({
        actionId: factId,
        lexicalRank: expect.any(Number),
        vectorRank: expect.any(Number),
      }),
    );
    // Recalled, not in the history: the window starts well after the fact (position 2).
    expect(manifest.history.included).toBeLessThan(manifest.history.total - 40);
    expect(manifest.sections.map((s) => s.label)).toContain('recalled_passages');
  });
});
