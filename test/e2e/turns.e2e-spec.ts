// A whole adventure played through the built apps (API and context worker as
// processes, real Postgres and Redis, a fake OpenAI-compatible model), with
// assertions on the exact requests the model received: what a turn sends is
// the product, so the prompt bytes are the thing to check.
import { randomUUID } from 'node:crypto';
import { CONTINUE_INSTRUCTION } from '@chronicle/llm';
import { EMIT_REMINDER, EMIT_RULE, STATE_HEADING } from '@chronicle/narrative';
import { AppSystem } from '@chronicle/testing';
import type { RecordedRequest } from '../support/fake-openai-server';
import { ChronicleClient, ofType, type PlayedTurn } from './support/chronicle.client';
import {
  narration,
  occurrences,
  promptOf,
  ScriptedNarrator,
  type ScriptedReply,
} from './support/scripted-narrator';

jest.setTimeout(240_000);

const CHAT = '/v1/chat/completions';
const REFUSAL_NOTE = '[Part of your last state block was not applied:';
const MIRA_LORE = 'World Lore: Mira is a smuggler who runs lamp oil past the customs house.';
const LAMP_ROOM_LORE = 'World Lore: The lamp room sits at the top of 212 iron steps.';
const CARD_NOTE = 'SECRET-NOTE-never-sent';
const AUTHORS_NOTE = "[Author's note: Keep the weather hostile.]";

let system: AppSystem;
let client: ChronicleClient;
const narrator = new ScriptedNarrator();

beforeAll(async () => {
  system = await AppSystem.start({ apps: ['api', 'context-worker'] });
  system.fake.setDefaultReply(narrator.reply);
  client = new ChronicleClient(system.apiUrl);
});

afterAll(async () => {
  await system?.close();
});

function chatRequests(): RecordedRequest[] {
  return system.fake.requestsTo(CHAT);
}

function adventureBody() {
  return {
    title: 'The Dark Lighthouse',
    opening:
      'You are ${Name}, keeper of the Saltmarch light. The lamp has been dark for three nights, and the harbour master has stopped answering your letters.',
    placeholders: { Name: 'Ada Quill' },
    plotEssentials: 'The harbour master owes Ada money.',
    authorsNote: 'Keep the weather hostile.',
    aiInstructions: 'Write in present tense.',
    persona: {
      name: 'Ada Quill',
      pronouns: 'she/her',
      description: 'A lighthouse keeper with a debt.',
    },
    storyCards: [
      {
        name: 'Mira',
        keys: 'Mira',
        entry: 'Mira is a smuggler who runs lamp oil past the customs house.',
        type: 'character',
        notes: CARD_NOTE,
      },
      {
        name: 'Lamp room',
        keys: 'lamp room',
        entry: 'The lamp room sits at the top of 212 iron steps.',
        type: 'location',
        notes: '',
      },
    ],
    canon: {
      rules: ['The dead do not return.'],
      forbiddenStatusChanges: [{ from: 'dead', to: 'alive' }],
    },
    settings: { model: 'fake-model', contextTokenBudget: 8192 },
  };
}

/** The turn ended with `done`, the stored narration is the reply's prose, the client saw it all. */
function expectNarrated(turn: PlayedTurn, reply: ScriptedReply): void {
  expect(turn.stream.outcome).toBe('done');
  const done = turn.stream.final as { action: { id: string; text: string; type: string } };
  expect(done.action.text).toBe(reply.prose);
  expect(done.action.type).toBe('ai');
  // the stream may carry the raw reply or only its prose; either way, all of it, once
  expect([reply.text, reply.prose]).toContain(turn.stream.text.trim());
}

async function playDefault(
  adventureId: string,
  type: 'do' | 'say' | 'story' | 'continue',
  text: string,
) {
  const before = narrator.replies.length;
  const turn = await client.play(adventureId, type, text);
  expect(narrator.replies.length).toBe(before + 1);
  const reply = narrator.last();
  expectNarrated(turn, reply);
  return { turn, reply, prompt: promptOf(reply.request) };
}

describe('a 30-turn adventure', () => {
  it('sends stable system text, ordered sections, no retried or undone takes, and each rejection once', async () => {
    await system.explainFailure(async () => {
      const adventureId = await client.createAdventure(adventureBody());

      // --- 1: do. The first prompt: the opening with its placeholder answered, no lore yet.
      const first = await playDefault(adventureId, 'do', 'climb the stair to the gallery (act 1)');
      expect(first.turn.accepted).toEqual(
        expect.objectContaining({
          turnId: expect.any(String),
          actionId: expect.any(String),
          version: expect.any(Number),
          stream: `/v1/adventures/${adventureId}/turns/${first.turn.accepted.turnId}/stream`,
        }),
      );
      expect(first.turn.stream.contentType).toMatch(/^text\/event-stream/);
      expect(first.turn.stream.frames[0].event).toBe('player');
      expect(first.prompt.user).toContain('You are Ada Quill, keeper of the Saltmarch light.');
      expect(first.prompt.user).not.toContain('${Name}');
      expect(first.prompt.user).toContain('(act 1)');
      expect(first.prompt.user).not.toContain(MIRA_LORE);
      expect(first.prompt.system).toContain(EMIT_RULE);
      expect(first.prompt.system).toContain('Ada Quill (she/her)');
      expect(first.prompt.system).toContain('The dead do not return.');

      // --- 2-4: say, story, continue; history carries the earlier takes.
      const second = await playDefault(adventureId, 'say', 'Is anyone up there? (act 2)');
      expect(second.prompt.user).toContain(first.reply.marker);
      expect(second.prompt.user).toContain('Is anyone up there? (act 2)');
      const third = await playDefault(adventureId, 'story', 'The wind drops for a moment (act 3).');
      expect(third.prompt.user).toContain('The wind drops for a moment (act 3).');
      const fourth = await playDefault(adventureId, 'continue', '');
      expect(fourth.turn.stream.frames[0].event).toBe('player');
      expect(fourth.prompt.user).toContain(third.reply.marker);

      // --- 5: a card's key in the window brings its entry in; notes are never sent.
      const fifth = await playDefault(adventureId, 'do', 'call out for Mira (act 5)');
      expect(occurrences(fifth.prompt.user, MIRA_LORE)).toBe(1);

      // --- 6: the model writes a state line the referee refuses.
      const bad = narration(1000);
      const badText = bad.text.replace(
        '```state\n',
        '```state\n{"type":"status","id":"ghost-of-nobody","to":"alive"}\n',
      );
      system.fake.enqueue({ text: badText, chunks: 5, path: CHAT, usage: { cachedTokens: 64 } });
      const sixth = await client.play(adventureId, 'do', 'search the desk (act 6)');
      expectNarrated(sixth, { ...bad, text: badText });
      const requestsSoFar = chatRequests().length;

      // --- 7: the next prompt carries the refusal note exactly once, right above the reminder.
      const seventh = await playDefault(adventureId, 'do', 'read the ledger (act 7)');
      expect(chatRequests().length).toBe(requestsSoFar + 1);
      expect(occurrences(seventh.prompt.user, REFUSAL_NOTE)).toBe(1);
      // The refused line is quoted once (its fix names the id again, so count the line).
      expect(
        occurrences(seventh.prompt.user, '{"type":"status","id":"ghost-of-nobody","to":"alive"}'),
      ).toBe(1);
      expect(seventh.prompt.user.indexOf(REFUSAL_NOTE)).toBeLessThan(
        seventh.prompt.user.indexOf(EMIT_REMINDER),
      );
      // --- 8: and the one after does not.
      const eighth = await playDefault(adventureId, 'say', 'Where did the oil go? (act 8)');
      expect(occurrences(eighth.prompt.user, REFUSAL_NOTE)).toBe(0);
      expect(eighth.prompt.user).not.toContain('ghost-of-nobody');

      // --- 9, 10: retry. The retried take is absent from the retry's prompt and from later ones.
      const ninth = await playDefault(adventureId, 'do', 'trim the wick (act 9)');
      const retried = await client.retry(adventureId);
      const retryReply = narrator.last();
      expectNarrated(retried, retryReply);
      const retryPrompt = promptOf(retryReply.request);
      expect(retryPrompt.user).toContain('trim the wick (act 9)');
      expect(retryPrompt.user).not.toContain(ninth.reply.marker);
      const eleventh = await playDefault(adventureId, 'do', 'wind the clockwork (act 10)');
      expect(eleventh.prompt.user).toContain(retryReply.marker);
      expect(eleventh.prompt.user).not.toContain(ninth.reply.marker);

      // --- undo, then redo: the undone turn comes back.
      const twelfth = await playDefault(adventureId, 'do', 'polish the lens (act 11)');
      expect((await client.undo(adventureId)).status).toBe(200);
      expect((await client.redo(adventureId)).status).toBe(200);
      const thirteenth = await playDefault(adventureId, 'do', 'check the oil tank (act 12)');
      expect(thirteenth.prompt.user).toContain('polish the lens (act 11)');
      expect(thirteenth.prompt.user).toContain(twelfth.reply.marker);

      // --- undo, then act: the undone turn is gone, and redo has nothing left to restore.
      const fourteenth = await playDefault(adventureId, 'do', 'sound the horn (act 13)');
      expect((await client.undo(adventureId)).status).toBe(200);
      const fifteenth = await playDefault(adventureId, 'do', 'light a candle instead (act 14)');
      expect(fifteenth.prompt.user).not.toContain('sound the horn (act 13)');
      expect(fifteenth.prompt.user).not.toContain(fourteenth.reply.marker);
      const lateRedo = await client.redo(adventureId);
      expect(lateRedo.status).toBeGreaterThanOrEqual(400);
      expect(lateRedo.status).toBeLessThan(500);

      // --- edit a narration: the next prompt has the new text, not the old.
      const thirteenthDone = thirteenth.turn.stream.final as { action: { id: string } };
      const edited = await client.editAction(
        adventureId,
        thirteenthDone.action.id,
        'The oil tank is half full and smells of fish (edited once).',
      );
      expect(edited.status).toBe(200);
      const sixteenth = await playDefault(adventureId, 'do', 'climb down (act 15)');
      expect(sixteenth.prompt.user).toContain(
        'The oil tank is half full and smells of fish (edited once).',
      );
      expect(sixteenth.prompt.user).not.toContain(thirteenth.reply.marker);

      // --- erase a player action: the next prompt leaves it out.
      const erased = await client.eraseAction(adventureId, fifteenth.turn.accepted.actionId);
      expect([200, 204]).toContain(erased.status);
      const seventeenth = await playDefault(adventureId, 'do', 'lock the door (act 16)');
      expect(seventeenth.prompt.user).not.toContain('light a candle instead (act 14)');
      expect(seventeenth.prompt.user).toContain(fifteenth.reply.marker);

      // --- a second card triggers on its key.
      const eighteenth = await playDefault(adventureId, 'say', 'Take me to the lamp room (act 17)');
      expect(occurrences(eighteenth.prompt.user, LAMP_ROOM_LORE)).toBe(1);

      // --- play on to 30 model requests, cycling the input types.
      const types = ['do', 'say', 'story', 'continue'] as const;
      for (let act = 18; chatRequests().length < 30; act++) {
        const type = types[act % types.length];
        const text = type === 'say' ? `Hold the light steady (act ${act})` : `wait (act ${act})`;
        await playDefault(adventureId, type, type === 'continue' ? '' : text);
      }

      // --- across every request ---
      const prompts = chatRequests().map(promptOf);
      expect(prompts).toHaveLength(30);
      // the system text is a cacheable prefix: byte-identical on every turn
      expect(new Set(prompts.map((p) => p.system)).size).toBe(1);
      for (const [index, prompt] of prompts.entries()) {
        const at = `request ${index + 1}`;
        expect([at, prompt.user.endsWith(`${EMIT_REMINDER}\n\n${CONTINUE_INSTRUCTION}`)]).toEqual([
          at,
          true,
        ]);
        expect([at, occurrences(prompt.user, EMIT_REMINDER)]).toEqual([at, 1]);
        expect([at, prompt.user.includes(CARD_NOTE) || prompt.system.includes(CARD_NOTE)]).toEqual([
          at,
          false,
        ]);
        // history → author's note → recent history → lore → state → length hint → reminder
        // (on the first turn the whole story is "recent", so the note comes before the opening)
        const order = [
          index === 0
            ? -1
            : prompt.user.indexOf('You are Ada Quill, keeper of the Saltmarch light.'),
          prompt.user.indexOf(AUTHORS_NOTE),
          prompt.user.indexOf(MIRA_LORE),
          prompt.user.indexOf(STATE_HEADING),
          prompt.user.indexOf('[Hard limit'),
          prompt.user.lastIndexOf(EMIT_REMINDER),
        ].filter((position) => position >= 0);
        expect([at, order]).toEqual([at, [...order].sort((a, b) => a - b)]);
        if (index >= 4) {
          expect([at, prompt.user.indexOf(AUTHORS_NOTE)]).not.toEqual([at, -1]);
          expect([at, prompt.user.indexOf(STATE_HEADING)]).not.toEqual([at, -1]);
        }
      }

      // --- the log ---
      const events = await client.events(adventureId);
      const narrated = ofType(events, 'Narrated');
      expect(narrated).toHaveLength(30);
      expect(ofType(events, 'NarrationFailed')).toHaveLength(0);
      expect(ofType(events, 'RetryRequested')).toHaveLength(1);
      expect(ofType(events, 'HeadMoved').map((e) => e.data.reason)).toEqual([
        'undo',
        'redo',
        'undo',
      ]);
      expect(ofType(events, 'ActionEdited')).toHaveLength(1);
      expect(ofType(events, 'ActionErased')).toHaveLength(1);
      const refused = narrated.filter((e) => e.data.rejected.length > 0);
      expect(refused).toHaveLength(1);
      expect(refused[0].data.turnId).toBe(sixth.accepted.turnId);
      for (const event of narrated) {
        expect(event.data.usage.cachedTokens).toBe(64);
        expect(event.data.narrator).toBe('remote');
        expect(event.data.action.text).not.toContain('```');
      }
    });
  });
});

describe('one turn in flight', () => {
  it('answers one of two simultaneous actions with 202 and the other with 409', async () => {
    await system.explainFailure(async () => {
      const adventureId = await client.createAdventure(adventureBody());
      const [a, b] = await Promise.all([
        client.act(adventureId, 'do', 'open the left door'),
        client.act(adventureId, 'do', 'open the right door'),
      ]);
      expect([a.status, b.status].sort()).toEqual([202, 409]);
      const loser = a.status === 409 ? a : b;
      expect(loser.body).toEqual(
        expect.objectContaining({ statusCode: 409, message: expect.any(String) }),
      );
      const winner = a.status === 202 ? a : b;
      const stream = await client.follow(winner.body);
      expect(stream.outcome).toBe('done');
      const events = await client.events(adventureId);
      expect(ofType(events, 'PlayerActed')).toHaveLength(1);
      expect(ofType(events, 'Narrated')).toHaveLength(1);
      // and once it is done, the adventure takes the next action
      expect((await client.act(adventureId, 'do', 'open the right door')).status).toBe(202);
    });
  });

  it('treats an action id sent twice as one turn', async () => {
    await system.explainFailure(async () => {
      const adventureId = await client.createAdventure(adventureBody());
      const id = randomUUID();
      const first = await client.act(adventureId, 'say', 'Hello?', id);
      expect(first.status).toBe(202);
      // while the turn runs, and after it is done, the same id answers the same turn
      const again = await client.act(adventureId, 'say', 'Hello?', id);
      expect(again.status).toBe(202);
      expect(again.body.turnId).toBe(first.body.turnId);
      expect(again.body.actionId).toBe(first.body.actionId);
      expect((await client.follow(first.body)).outcome).toBe('done');
      const late = await client.act(adventureId, 'say', 'Hello?', id);
      expect(late.status).toBe(202);
      expect(late.body.turnId).toBe(first.body.turnId);
      const events = await client.events(adventureId);
      expect(ofType(events, 'PlayerActed')).toHaveLength(1);
      expect(ofType(events, 'Narrated')).toHaveLength(1);
    });
  });
});
