import { InvalidCommandError, LimitExceededError } from './adventure.errors';
import { LIMITS } from './adventure.limits';
import { decideMemory } from './memory.decider';
import type { MemoryRecord } from './memory.state';
import {
  AdventureHistory,
  createAdventureCommand,
  narrationCommand,
} from './testing/adventure.factory';
import { given } from './testing/decider.given';

// Every limit of LIMITS that the deciders enforce, breached once and met once: the breach is a
// 4xx-kind domain error whose message names the limit.

const cards = (count: number) =>
  Array.from({ length: count }, (_, i) => ({
    id: `card-${i}`,
    name: `Card ${i}`,
    keys: '',
    entry: '',
  }));

describe('LIMITS', () => {
  it('holds the published limits (README: limits), so a change to one is deliberate', () => {
    expect(LIMITS).toMatchObject({
      bodyBytes: 2 * 1024 * 1024,
      importBodyBytes: 20 * 1024 * 1024,
      actionChars: 20_000,
      proseChars: 50_000,
      narrationChars: 50_000,
      storyCardsPerAdventure: 5_000,
      loreFileBytes: 20 * 1024 * 1024,
      loreInflatedBytes: 20 * 1024 * 1024,
      memoriesPerAdventure: 1_000,
      adventuresPerUser: 100,
    });
  });

  describe('story cards per adventure', () => {
    it('creates an adventure with 5,000 cards and refuses 5,001, naming the limit', () => {
      given([])
        .when(createAdventureCommand({ storyCards: cards(5_001) }))
        .thenThrows(LimitExceededError, 'limit', /at most 5000 story cards/);
      expect(() => AdventureHistory.create({ storyCards: cards(5_000) })).not.toThrow();
    });

    it('refuses the 5,001st card added', () => {
      const full = AdventureHistory.create({ storyCards: cards(5_000) });
      given(full)
        .when({
          type: 'AddStoryCard',
          data: { card: { id: 'one-more', name: 'More', keys: '', entry: '' } },
        })
        .thenThrows(LimitExceededError, 'limit', /storyCardsPerAdventure/);
      given(AdventureHistory.create({ storyCards: cards(4_999) }))
        .when({
          type: 'AddStoryCard',
          data: { card: { id: 'last', name: 'Last', keys: '', entry: '' } },
        })
        .then([
          {
            type: 'StoryCardAdded',
            data: {
              card: { id: 'last', name: 'Last', keys: '', entry: '', type: 'other', notes: '' },
            },
          },
        ]);
    });
  });

  describe('card entry and plot fields', () => {
    const atLimit = 'x'.repeat(LIMITS.proseChars);
    const over = atLimit + 'x';

    it('accepts 50,000 characters in a card entry and the plot fields', () => {
      expect(() =>
        AdventureHistory.create({
          plotEssentials: atLimit,
          authorsNote: atLimit,
          aiInstructions: atLimit,
          storyCards: [{ id: 'c', name: 'C', keys: '', entry: atLimit }],
        }),
      ).not.toThrow();
    });

    it('refuses 50,001, naming the field and the limit', () => {
      for (const field of ['plotEssentials', 'authorsNote', 'aiInstructions'] as const) {
        given([])
          .when(createAdventureCommand({ [field]: over }))
          .thenThrows(
            InvalidCommandError,
            'invalid',
            new RegExp(`${field} is 50001 characters; keep it to 50000`),
          );
        given(AdventureHistory.create())
          .when({ type: 'EditAdventure', data: { [field]: over } })
          .thenThrows(InvalidCommandError, 'invalid', /keep it to 50000/);
      }
      given(AdventureHistory.create())
        .when({ type: 'EditStoryCard', data: { cardId: 'card-mira', changes: { entry: over } } })
        .thenThrows(
          InvalidCommandError,
          'invalid',
          /card\.entry is 50001 characters; keep it to 50000/,
        );
    });
  });

  describe('action text', () => {
    it('accepts 20,000 characters and refuses 20,001, naming the limit', () => {
      const submit = (text: string) =>
        given(AdventureHistory.create()).when({
          type: 'SubmitAction',
          data: { turnId: 't1', inputType: 'story', text, actionId: 'a1' },
        });
      submit('x'.repeat(LIMITS.actionChars + 1)).thenThrows(
        InvalidCommandError,
        'invalid',
        /text is 20001 characters; keep it to 20000/,
      );
      const history = AdventureHistory.create();
      expect(() => history.act('story', 'x'.repeat(LIMITS.actionChars - 10))).not.toThrow();
    });
  });

  describe('narration text', () => {
    it('given an Output hook may return 50,000 characters, when a narration that long is recorded, then it is stored; one more is refused naming the limit', () => {
      expect(LIMITS.narrationChars).toBe(LIMITS.scripts.outputTextChars);
      const atLimit = AdventureHistory.create();
      const turn = atLimit.act('do', 'type #help');
      const text = 'x'.repeat(LIMITS.narrationChars);
      const [narrated] = atLimit.run(narrationCommand(turn.turnId, 'help-page', { text }));
      expect(narrated.type).toBe('Narrated');
      const over = AdventureHistory.create();
      const overTurn = over.act('do', 'type #help');
      given(over)
        .when(narrationCommand(overTurn.turnId, 'help-page', { text: `${text}x` }))
        .thenThrows(InvalidCommandError, 'invalid', /text is 50001 characters; keep it to 50000/);
    });
  });

  describe('memories per adventure', () => {
    it('refuses the 1,001st memory, naming the limit', () => {
      const state = AdventureHistory.create().state;
      const memory = (i: number) => ({ id: `m${i}` }) as MemoryRecord;
      const full = {
        ...state,
        memory: {
          ...state.memory,
          memories: Array.from({ length: LIMITS.memoriesPerAdventure }, (_, i) => memory(i)),
        },
      };
      const add = {
        type: 'AddMemory' as const,
        data: { memoryId: 'new', text: 'The keeper lied.' },
      };
      expect(() => decideMemory(add, full)).toThrow(LimitExceededError);
      expect(() => decideMemory(add, full)).toThrow(/at most 1000 memories/);
      const roomForOne = {
        ...full,
        memory: { ...full.memory, memories: full.memory.memories.slice(1) },
      };
      expect(decideMemory(add, roomForOne)[0].type).toBe('MemoryWritten');
    });
  });
});
