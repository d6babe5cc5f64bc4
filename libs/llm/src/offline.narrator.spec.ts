import {
  EMIT_REMINDER,
  EMIT_RULE,
  evolve,
  initialNarrativeState,
  parseReply,
  referee,
  renderForPrompt,
  type NarrativeState,
  type StateEvent,
} from '@chronicle/narrative';

import type { ModelStreamEvent, NarrationRequest } from './model-client.types';
import { OFFLINE_MODEL, OfflineNarrator, knownEntities } from './offline.narrator';

const CANON = { rules: [], forbiddenStatusChanges: [] };

function stateOf(...events: StateEvent[]): NarrativeState {
  return events.reduce(evolve, initialNarrativeState());
}

function request(story: string): NarrationRequest {
  return {
    system: `You are a masterful storyteller.\n\n${EMIT_RULE}`,
    story,
    mode: 'chat',
    model: 'ignored',
    temperature: 0.8,
    maxOutputTokens: 800,
    reasoningMaxTokens: 0,
  };
}

function prompt(parts: {
  history: string;
  action: string;
  lore?: string[];
  state?: NarrativeState;
}): string {
  return [
    parts.history,
    parts.action,
    ...(parts.lore ?? []).map((entry) => `World Lore: ${entry}`),
    parts.state ? renderForPrompt(parts.state) : '',
    EMIT_REMINDER,
  ]
    .filter((section) => section !== '')
    .join('\n\n');
}

async function reply(narrator: OfflineNarrator, story: string) {
  const events: ModelStreamEvent[] = [];
  for await (const event of narrator.streamNarration(request(story))) events.push(event);
  const text = events
    .filter((e): e is { type: 'text'; text: string } => e.type === 'text')
    .map((e) => e.text)
    .join('');
  return { events, text, done: events[events.length - 1] };
}

const CHAPTER_SYSTEM_TEXT = 'You write one chapter summary of a long interactive story.';

describe('OfflineNarrator', () => {
  const narrator = new OfflineNarrator();
  const harbor = prompt({
    history: 'The fog rolls over the harbor as the last boats come in.',
    action: '> You search the docks for the smuggler.',
    lore: ['Mira Vance is a smuggler who knows every hidden cove on the coast.'],
  });

  it('streams a few chunks and ends with usage and its own model name', async () => {
    const { events, done } = await reply(narrator, harbor);
    expect(events.filter((e) => e.type === 'text').length).toBeGreaterThanOrEqual(3);
    expect(done).toMatchObject({ type: 'done', finishReason: 'stop', model: OFFLINE_MODEL });
    const usage = (done as { usage: { promptTokens: number; completionTokens: number } }).usage;
    expect(usage.promptTokens).toBeGreaterThan(harbor.length / 8);
    expect(usage.completionTokens).toBeGreaterThan(10);
    expect(OFFLINE_MODEL).toBe('offline-narrator');
  });

  it('answers the same prompt with the same reply', async () => {
    expect((await reply(narrator, harbor)).text).toBe(
      (await reply(new OfflineNarrator(), harbor)).text,
    );
  });

  it("writes second-person prose using the player's words and a story card's name", async () => {
    const parsed = parseReply((await reply(narrator, harbor)).text);
    expect(parsed.narration).toContain('You search the docks for the smuggler.');
    expect(parsed.narration).toContain('Mira Vance');
    expect(parsed.narration).not.toContain('```');
  });

  it('emits a state block the referee accepts: the new name enters, and a fact about it', async () => {
    const parsed = parseReply((await reply(narrator, harbor)).text);
    expect(parsed.rejections).toEqual([]);
    const verdict = referee(initialNarrativeState(), CANON, parsed.events);
    expect(verdict.rejected).toEqual([]);
    expect(verdict.accepted).toEqual([
      { type: 'enter', id: 'mira-vance', name: 'Mira Vance', kind: 'character' },
      expect.objectContaining({ type: 'fact', about: ['mira-vance'] }),
    ]);
  });

  it('does not enter an id the state already holds; it moves the known character instead', async () => {
    const state = stateOf(
      { type: 'enter', id: 'mira-vance', name: 'Mira Vance', kind: 'character', at: undefined },
      { type: 'enter', id: 'old-pier', name: 'The Old Pier', kind: 'place' },
    );
    const story = prompt({
      history: 'Night falls.',
      action: '> You call out to Mira Vance.',
      lore: ['Mira Vance is a smuggler.'],
      state,
    });
    expect([...knownEntities(story).keys()]).toEqual(['mira-vance', 'old-pier']);
    const parsed = parseReply((await reply(narrator, story)).text);
    const verdict = referee(state, CANON, parsed.events);
    expect(verdict.rejected).toEqual([]);
    expect(parsed.events.some((e) => e.type === 'enter')).toBe(false);
    expect(parsed.events).toContainEqual({ type: 'move', id: 'mira-vance', to: 'old-pier' });
  });

  it('handles said lines and a continue with no player action', async () => {
    const said = parseReply(
      (await reply(narrator, prompt({ history: 'Rain.', action: '> You say "Who goes there?"' })))
        .text,
    );
    expect(said.narration).toContain('"Who goes there?"');
    const cont = parseReply(
      (await reply(narrator, prompt({ history: 'Rain falls on the roof.', action: '' }))).text,
    );
    expect(cont.narration.length).toBeGreaterThan(20);
    expect(referee(initialNarrativeState(), CANON, cont.events).rejected).toEqual([]);
  });

  it('passes the referee across many varied prompts', async () => {
    const names = [
      'Mira',
      'Captain Rhys',
      'The Old Mill',
      'Brass Key',
      'Old Tom',
      'Lady Ashcombe',
      'Greywater',
    ];
    const actions = [
      'open the door',
      'follow the lantern light',
      'ask about the key',
      'draw your sword',
      'wait',
    ];
    let clean = 0;
    const total = 60;
    for (let i = 0; i < total; i += 1) {
      const known = names.slice(0, i % 4);
      const state = stateOf(
        ...known.map((name, k): StateEvent => ({
          type: 'enter',
          id: name.toLowerCase().replace(/[^a-z0-9]+/g, '-'),
          name,
          kind: k === 2 ? 'place' : 'character',
        })),
      );
      const story = prompt({
        history: `Turn ${i}. The wind picks up.`,
        action: `> You ${actions[i % actions.length]}${i % 3 === 0 ? ` with ${names[(i + 1) % names.length]}` : ''}.`,
        lore: [
          `${names[i % names.length]} is part of this story.`,
          `${names[(i + 3) % names.length]} lives nearby.`,
        ],
        state,
      });
      const parsed = parseReply((await reply(narrator, story)).text);
      const verdict = referee(state, CANON, parsed.events);
      if (parsed.rejections.length === 0 && verdict.rejected.length === 0 && !parsed.onlyBlock)
        clean += 1;
    }
    expect(clean / total).toBeGreaterThanOrEqual(0.95);
  });

  it('stops when the signal is aborted', async () => {
    const controller = new AbortController();
    const seen: ModelStreamEvent[] = [];
    await expect(
      (async () => {
        for await (const event of narrator.streamNarration(request(harbor), controller.signal)) {
          seen.push(event);
          controller.abort();
        }
      })(),
    ).rejects.toMatchObject({ kind: 'cancelled' });
    expect(seen).toHaveLength(1);
  });

  describe('complete()', () => {
    const cast =
      'Cast:\n- Aria (she/her) — the protagonist. A lighthouse keeper.\n- Mira — a smuggler.';
    const excerpt =
      'You climb the stairs of the lighthouse. Mira follows you with a lantern. You find the brass key under a loose stone and hand it to Mira, who promises to keep your secret from the harbor guard.';

    it('writes a memory in the third person, at most 50 words, naming the protagonist', async () => {
      const user = `${cast}\nSetting: A stormy coast.\n\nStory excerpt:\n${excerpt}\n\nMemory:`;
      const result = await narrator.complete({
        system: 'Write one memory.',
        user,
        model: 'x',
        temperature: 0.3,
        maxTokens: 400,
      });
      expect(result.model).toBe(OFFLINE_MODEL);
      expect(result.text.split(/\s+/).length).toBeLessThanOrEqual(50);
      expect(result.text).not.toMatch(/\byou(r)?\b/i);
      expect(result.text).toContain('Aria');
      expect(result).toEqual(
        await narrator.complete({
          system: 'Write one memory.',
          user,
          model: 'x',
          temperature: 0.3,
          maxTokens: 400,
        }),
      );
    });

    it('writes a summary of at most 250 words from the previous summary and the new events', async () => {
      const events = Array.from(
        { length: 40 },
        (_, i) => `Aria met a stranger at the pier on night ${i}.`,
      ).join('\n');
      const user = `${cast}\n\nCurrent story summary:\nAria came to the coast to keep the light.\n\nNew events since the last update:\n${events}\n\nUpdated summary:`;
      const result = await narrator.complete({
        system: 'Update the story summary.',
        user,
        model: 'x',
        temperature: 0.3,
        maxTokens: 600,
      });
      const words = result.text.split(/\s+/);
      expect(words.length).toBeLessThanOrEqual(250);
      expect(words.length).toBeGreaterThan(50);
      expect(result.text).toContain('Aria came to the coast');
      expect(result.text).toContain('night 39');
    });

    it('given a chapter, when summarised offline, then its own most telling sentences are kept verbatim, at most 120 words', async () => {
      const story = [
        excerpt,
        'The storm breaks over the harbor. Mira hides the brass key in the lantern room.',
        ...Array.from({ length: 20 }, (_, i) => `Gulls circle the rocks at hour ${i}.`),
      ].join('\n\n');
      const request = {
        system: CHAPTER_SYSTEM_TEXT,
        user: `${cast}\n\nChapter:\n${story}\n\nChapter summary:`,
        model: 'x',
        temperature: 0.3,
        maxTokens: 300,
        purpose: 'summary' as const,
      };
      const result = await narrator.complete(request);
      const words = result.text.match(/[\p{L}\p{N}]+/gu) ?? [];
      expect(words.length).toBeLessThanOrEqual(120);
      expect(words.length).toBeGreaterThan(20);
      // Every sentence it keeps is the story's own, and the brass key (told twice) is kept.
      for (const sentence of result.text.match(/[^.!?]+[.!?]/g) ?? []) {
        expect(story).toContain(sentence.trim());
      }
      expect(result.text).toContain('brass key');
      expect(result.text).not.toContain('Cast:');
      expect(await narrator.complete(request)).toEqual(result);
    });

    it('takes the purpose from the request when the prompt does not show it', async () => {
      const long = Array.from({ length: 100 }, () => 'word').join(' ');
      const result = await narrator.complete({
        system: 'x',
        user: long,
        model: 'x',
        temperature: 0,
        maxTokens: 10,
        purpose: 'memory',
      });
      expect(result.text.split(/\s+/).length).toBeLessThanOrEqual(50);
    });
  });
});
