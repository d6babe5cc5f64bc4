import type { AdventureCommand } from './adventure.commands';
import { DuplicateActionError, TurnNotInFlightError, decide } from './adventure.decider';
import {
  ConflictError,
  InvalidCommandError,
  NotFoundError,
  TurnInFlightError,
} from './adventure.errors';
import { project } from './adventure.projector';
import { DEFAULT_SETTINGS } from './adventure.state';
import {
  AdventureHistory,
  createAdventureCommand,
  narrationCommand,
  wordCountTokens,
} from './testing/adventure.factory';
import { given } from './testing/decider.given';

describe('adventure decider', () => {
  describe('CreateAdventure', () => {
    it('answers the placeholders, fills default settings and counts the opening', () => {
      const command = createAdventureCommand({
        opening: 'You are ${Name}, keeper of ${Place}.',
        placeholders: { Name: 'Ash', Place: 'the light' },
        settings: { temperature: 1.1 },
      });
      const [event] = decideOnce(command);
      expect(event.type).toBe('AdventureCreated');
      if (event.type !== 'AdventureCreated') return;
      expect(event.data.opening).toBe('You are Ash, keeper of the light.');
      expect(event.data.placeholders).toEqual({ Name: 'Ash', Place: 'the light' });
      expect(event.data.settings).toEqual({ ...DEFAULT_SETTINGS, temperature: 1.1 });
      expect(event.data.openingAction).toEqual({ id: 'opening', tokens: 7 });
      expect(event.data.storyCards[0]).toEqual({
        id: 'card-mira',
        name: 'Mira',
        keys: 'mira, keeper',
        entry: 'Mira keeps the light.',
        type: 'other',
        notes: '',
      });
    });

    it('names the placeholders left unanswered', () => {
      given([])
        .when(
          createAdventureCommand({ opening: 'Hi ${Name} of ${Town}', placeholders: { Name: 'A' } }),
        )
        .thenThrows(InvalidCommandError, 'invalid', /"Town"/);
    });

    it('names a setting out of range, and an unknown one', () => {
      given([])
        .when(createAdventureCommand({ settings: { contextTokenBudget: 100 } }))
        .thenThrows(InvalidCommandError, 'invalid', /contextTokenBudget must be between 256/);
      given([])
        .when(createAdventureCommand({ settings: { colour: 'red' } as never }))
        .thenThrows(InvalidCommandError, 'invalid', /settings\.colour is not a setting/);
    });

    it('takes the history mode, stable by default, and names a bad one', () => {
      given([])
        .when(createAdventureCommand({ settings: { historyMode: 'sideways' } as never }))
        .thenThrows(
          InvalidCommandError,
          'invalid',
          /settings\.historyMode must be "stable" or "sliding"/,
        );
      const [sliding] = decideOnce(
        createAdventureCommand({ settings: { historyMode: 'sliding' } }),
      );
      expect(sliding).toMatchObject({ data: { settings: { historyMode: 'sliding' } } });
      const [byDefault] = decideOnce(createAdventureCommand({}));
      expect(byDefault).toMatchObject({ data: { settings: { historyMode: 'stable' } } });
    });

    it('takes the context-hook mode and script limits, full and the global defaults by default', () => {
      given([])
        .when(createAdventureCommand({ settings: { contextHookMode: 'rewrite' } as never }))
        .thenThrows(
          InvalidCommandError,
          'invalid',
          /settings\.contextHookMode must be "full" or "append-only"/,
        );
      given([])
        .when(createAdventureCommand({ settings: { scriptHookTimeoutMs: 5 } }))
        .thenThrows(InvalidCommandError, 'invalid', /scriptHookTimeoutMs must be between 10/);
      given([])
        .when(createAdventureCommand({ settings: { scriptMemoryLimitMb: 4096 } }))
        .thenThrows(InvalidCommandError, 'invalid', /scriptMemoryLimitMb must be between 8 and/);
      const [byDefault] = decideOnce(createAdventureCommand({}));
      expect(byDefault).toMatchObject({
        data: {
          settings: {
            contextHookMode: 'full',
            scriptHookTimeoutMs: 2_000,
            scriptTurnBudgetMs: 5_000,
            scriptMemoryLimitMb: 64,
          },
        },
      });
      // Settable later, as an event, and folded on replay.
      const history = AdventureHistory.create();
      const [edited] = history.run({
        type: 'EditAdventure',
        data: { settings: { contextHookMode: 'append-only', scriptTurnBudgetMs: 800 } },
      });
      expect(edited).toMatchObject({
        type: 'AdventureEdited',
        data: { settings: { contextHookMode: 'append-only', scriptTurnBudgetMs: 800 } },
      });
      expect(history.state.settings).toMatchObject({
        contextHookMode: 'append-only',
        scriptTurnBudgetMs: 800,
        scriptHookTimeoutMs: 2_000,
      });
    });

    it('reads an AdventureCreated written before the scripts settings with their defaults', () => {
      const history = AdventureHistory.create();
      const [created, ...rest] = history.events;
      const old = JSON.parse(JSON.stringify(created)) as {
        data: { settings: Record<string, unknown> };
      };
      for (const key of [
        'contextHookMode',
        'scriptHookTimeoutMs',
        'scriptTurnBudgetMs',
        'scriptMemoryLimitMb',
      ]) {
        delete old.data.settings[key];
      }
      const replayed = project([old as unknown as typeof created, ...rest]);
      expect(replayed.settings).toEqual(history.state.settings);
    });

    it('refuses text with a NUL byte or a lone surrogate, and an empty title', () => {
      given([])
        .when(createAdventureCommand({ plotEssentials: 'a\u0000b' }))
        .thenThrows(InvalidCommandError, 'invalid', /plotEssentials contains a NUL/);
      given([])
        .when(createAdventureCommand({ authorsNote: 'bad \ud800 text' }))
        .thenThrows(InvalidCommandError, 'invalid', /authorsNote is not valid unicode/);
      given([])
        .when(createAdventureCommand({ title: '  ' }))
        .thenThrows(InvalidCommandError, 'invalid', /title is empty/);
    });

    it('given a persona with a name alone, when created, then the other fields are empty', () => {
      const [event] = decideOnce(createAdventureCommand({ persona: { name: 'Mira' } }));
      expect(event.type === 'AdventureCreated' && event.data.persona).toEqual({
        name: 'Mira',
        pronouns: '',
        description: '',
      });
    });

    it('refuses to create an adventure twice', () => {
      given(AdventureHistory.create())
        .when(createAdventureCommand())
        .thenThrows(ConflictError, 'conflict', /already exists/);
    });
  });

  it('answers not found for any other command on an adventure that does not exist', () => {
    given([])
      .when({ type: 'Undo', data: {} })
      .thenThrows(NotFoundError, 'not_found', /adventure not found/);
  });

  describe('EditAdventure', () => {
    it('records only what changed', () => {
      given(AdventureHistory.create())
        .when({
          type: 'EditAdventure',
          data: {
            title: 'The Lighthouse',
            authorsNote: 'Keep it bright.',
            settings: { temperature: 0.8, maxOutputTokens: 400 },
          },
        })
        .then([
          {
            type: 'AdventureEdited',
            data: { authorsNote: 'Keep it bright.', settings: { maxOutputTokens: 400 } },
          },
        ]);
    });

    it('appends nothing when nothing differs', () => {
      given(AdventureHistory.create())
        .when({ type: 'EditAdventure', data: { title: 'The Lighthouse' } })
        .then([]);
    });
  });

  describe('story cards', () => {
    const card = { id: 'card-ship', name: 'Ship', keys: 'ship', entry: 'A wreck.' };

    it('adds a card with its defaults, and refuses a repeated id', () => {
      given(AdventureHistory.create())
        .when({ type: 'AddStoryCard', data: { card } })
        .then([{ type: 'StoryCardAdded', data: { card: { ...card, type: 'other', notes: '' } } }]);
      given(AdventureHistory.create())
        .when({ type: 'AddStoryCard', data: { card: { ...card, id: 'card-mira' } } })
        .thenThrows(ConflictError, 'conflict', /card-mira already exists/);
    });

    it('edits only changed fields and removes; unknown cards are not found', () => {
      given(AdventureHistory.create())
        .when({
          type: 'EditStoryCard',
          data: { cardId: 'card-mira', changes: { name: 'Mira', entry: 'Mira is gone.' } },
        })
        .then([
          {
            type: 'StoryCardEdited',
            data: { cardId: 'card-mira', changes: { entry: 'Mira is gone.' } },
          },
        ]);
      given(AdventureHistory.create())
        .when({ type: 'RemoveStoryCard', data: { cardId: 'card-mira' } })
        .then([{ type: 'StoryCardRemoved', data: { cardId: 'card-mira' } }]);
      given(AdventureHistory.create())
        .when({ type: 'RemoveStoryCard', data: { cardId: 'nope' } })
        .thenThrows(NotFoundError, 'not_found', /story card nope/);
    });
  });

  describe('SubmitAction', () => {
    it('writes the formatted action with its token count', () => {
      given(AdventureHistory.create())
        .when({
          type: 'SubmitAction',
          data: { turnId: 't1', inputType: 'say', text: '"who is there"', actionId: 'a1' },
        })
        .then([
          {
            type: 'PlayerActed',
            data: {
              turnId: 't1',
              inputType: 'say',
              action: { id: 'a1', type: 'say', text: '> You say "who is there."', tokens: 6 },
            },
          },
        ]);
    });

    it('writes no player action for continue', () => {
      given(AdventureHistory.create())
        .when({
          type: 'SubmitAction',
          data: { turnId: 't1', inputType: 'continue', text: '', actionId: 'a1' },
        })
        .then([
          { type: 'PlayerActed', data: { turnId: 't1', inputType: 'continue', action: null } },
        ]);
    });

    it('answers 409 to a second action while a turn is in flight', () => {
      const history = AdventureHistory.create();
      history.act('do', 'walk north', { turnId: 'first' });
      given(history)
        .when({
          type: 'SubmitAction',
          data: { turnId: 't2', inputType: 'do', text: 'run', actionId: 'a2' },
        })
        .thenThrows(TurnInFlightError, 'conflict', /turn first is still being narrated/);
    });

    it('accepts the next action once the turn is narrated, failed or cancelled', () => {
      for (const finish of ['narrate', 'fail', 'cancel'] as const) {
        const history = AdventureHistory.create();
        history.act('do', 'walk north');
        history[finish]();
        expect(history.state.inFlight).toBeNull();
        expect(() => history.act('do', 'walk on')).not.toThrow();
      }
    });

    it('refuses a used action id, an unknown type and empty text', () => {
      const history = AdventureHistory.create();
      history.turn('do', 'walk north');
      const used = history.state.path[1].id;
      given(history)
        .when({
          type: 'SubmitAction',
          data: { turnId: 't9', inputType: 'do', text: 'x', actionId: used },
        })
        .thenThrows(DuplicateActionError, 'conflict', /already used/);
      given(history)
        .when({
          type: 'SubmitAction',
          data: { turnId: 't9', inputType: 'shout' as never, text: 'x', actionId: 'n' },
        })
        .thenThrows(InvalidCommandError, 'invalid', /use do, say, story or continue/);
      given(history)
        .when({
          type: 'SubmitAction',
          data: { turnId: 't9', inputType: 'do', text: ' ', actionId: 'n' },
        })
        .thenThrows(InvalidCommandError, 'invalid', /text is empty/);
    });
  });

  describe('RequestRetry', () => {
    it('replaces the narration at the head', () => {
      const history = AdventureHistory.create();
      const { aiActionId } = history.turn('do', 'walk north');
      given(history)
        .when({ type: 'RequestRetry', data: { turnId: 'retry-1' } })
        .then([
          { type: 'RetryRequested', data: { turnId: 'retry-1', replacesActionId: aiActionId } },
        ]);
    });

    it('needs the story to end with a narration', () => {
      given(AdventureHistory.create())
        .when({ type: 'RequestRetry', data: { turnId: 'r' } })
        .thenThrows(InvalidCommandError, 'invalid', /end with a narration/);
      const failed = AdventureHistory.create();
      failed.act('do', 'walk north');
      failed.fail();
      given(failed)
        .when({ type: 'RequestRetry', data: { turnId: 'r' } })
        .thenThrows(InvalidCommandError, 'invalid', /end with a narration/);
    });

    it('answers 409 while a turn is in flight', () => {
      const history = AdventureHistory.create();
      history.turn('do', 'walk north');
      history.requestRetry();
      given(history)
        .when({ type: 'RequestRetry', data: { turnId: 'again' } })
        .thenThrows(TurnInFlightError, 'conflict');
    });
  });

  describe('RecordNarration', () => {
    it('must answer the turn in flight', () => {
      const history = AdventureHistory.create();
      history.turn('do', 'walk north');
      const done = history.state.recentTurns[0].turnId;
      given(history)
        .when(narration(done, 'late'))
        .thenThrows(TurnNotInFlightError, 'conflict', /not in flight/);
    });

    it('carries the replaced take of a retry', () => {
      const history = AdventureHistory.create();
      const { aiActionId } = history.turn('do', 'walk north');
      const turnId = history.requestRetry();
      const [event] = decideOnce(narration(turnId, 'take-2'), history);
      expect(event).toMatchObject({
        type: 'Narrated',
        data: { turnId, replacesActionId: aiActionId, action: { id: 'take-2', tokens: 4 } },
      });
    });

    it('refuses an empty narration (a reply that was only a state block)', () => {
      const history = AdventureHistory.create();
      const { turnId } = history.act('do', 'walk north');
      given(history)
        .when(narration(turnId, 'n1', '  '))
        .thenThrows(InvalidCommandError, 'invalid', /text is empty/);
    });

    it('given an Output hook that made the narration blank (" "), when it is recorded, then it is stored as the script\'s text', () => {
      const history = AdventureHistory.create();
      const { turnId } = history.act('do', '#help');
      const run = (textChanged: boolean, outcome: 'ok' | 'failed') => ({
        ...narration(turnId, 'n1', ' '),
        data: {
          ...narration(turnId, 'n1', ' ').data,
          scripts: {
            output: {
              runs: [
                {
                  scriptId: 's',
                  hook: 'output' as const,
                  outcome,
                  textChanged,
                  ms: 1,
                  cpuMs: 1,
                  logs: [],
                },
              ],
              states: {},
              cardOps: [],
              messages: [],
            },
          },
        },
      });
      const [event] = decideOnce(run(true, 'ok'), history);
      expect(event).toMatchObject({
        type: 'Narrated',
        data: { action: { text: ' ' }, textByScript: true },
      });
      // A run that did not count, or changed nothing, leaves the blank the model's: refused.
      given(history)
        .when(run(false, 'ok'))
        .thenThrows(InvalidCommandError, 'invalid', /text is empty/);
      given(history)
        .when(run(true, 'failed'))
        .thenThrows(InvalidCommandError, 'invalid', /text is empty/);
    });

    it('given memories the prompt used, when the narration is recorded, then their use is counted in the same append', () => {
      const history = AdventureHistory.create();
      const { turnId } = history.act('do', 'walk north');
      const command = narrationCommand(turnId, 'n1', { memoriesUsed: ['m1', 'm2'] });
      const events = decideOnce(command, history);
      expect(events.map((event) => event.type)).toEqual(['Narrated', 'MemoriesUsed']);
      expect(events[1]).toEqual({
        type: 'MemoriesUsed',
        data: { turnId, memoryIds: ['m1', 'm2'] },
      });
    });

    it("given the retrieval query's embedding cost, when the narration is recorded, then it is paid for in the same append", () => {
      const history = AdventureHistory.create();
      const { turnId } = history.act('do', 'walk north');
      const usage = { model: 'embed', promptTokens: 12, completionTokens: 0 };
      const command = narrationCommand(turnId, 'n1');
      const events = decideOnce(
        { ...command, data: { ...command.data, retrievalUsage: usage } },
        history,
      );
      expect(events[1]).toEqual({
        type: 'ModelUsageRecorded',
        data: { purpose: 'retrieval', usage, turnId },
      });
    });

    it('given no memories used, when the narration is recorded, then only the narration is appended', () => {
      const history = AdventureHistory.create();
      const { turnId } = history.act('do', 'walk north');
      const events = decideOnce(narrationCommand(turnId, 'n1', { memoriesUsed: [] }), history);
      expect(events.map((event) => event.type)).toEqual(['Narrated']);
    });
  });

  describe('RecordModelUsage', () => {
    const usage = { model: 'm', promptTokens: 30, completionTokens: 5 };

    it('given an adventure, when a call no other event records is reported, then it is recorded', () => {
      given(AdventureHistory.create())
        .when({ type: 'RecordModelUsage', data: { purpose: 'embedding', usage } })
        .then([{ type: 'ModelUsageRecorded', data: { purpose: 'embedding', usage } }]);
    });

    it('given a call that cost nothing, or no adventure, when reported, then nothing is recorded', () => {
      const free = { model: 'offline-embedder', promptTokens: 0, completionTokens: 0 };
      given(AdventureHistory.create())
        .when({ type: 'RecordModelUsage', data: { purpose: 'embedding', usage: free } })
        .then([]);
      given([])
        .when({ type: 'RecordModelUsage', data: { purpose: 'memory', usage } })
        .then([]);
    });
  });

  describe('CancelTurn', () => {
    it('cancels the turn in flight; a finished turn conflicts; an unknown one is not found', () => {
      const history = AdventureHistory.create();
      const { turnId } = history.act('do', 'walk north');
      given(history)
        .when({ type: 'CancelTurn', data: { turnId } })
        .then([{ type: 'NarrationCancelled', data: { turnId } }]);
      history.narrate();
      given(history)
        .when({ type: 'CancelTurn', data: { turnId } })
        .thenThrows(ConflictError, 'conflict', /already finished/);
      given(history)
        .when({ type: 'CancelTurn', data: { turnId: 'never' } })
        .thenThrows(NotFoundError, 'not_found');
    });
  });

  describe('Undo and Redo', () => {
    it('undoes the narration and the player action it answered', () => {
      const history = AdventureHistory.create();
      const first = history.turn('do', 'walk north');
      const second = history.turn('say', 'hello');
      given(history)
        .when({ type: 'Undo', data: {} })
        .then([
          {
            type: 'HeadMoved',
            data: { from: second.aiActionId, to: first.aiActionId, reason: 'undo' },
          },
        ]);
    });

    it('undoes a continue narration alone', () => {
      const history = AdventureHistory.create();
      const first = history.turn('do', 'walk north');
      history.act('continue');
      const continued = history.narrate();
      given(history)
        .when({ type: 'Undo', data: {} })
        .then([
          { type: 'HeadMoved', data: { from: continued, to: first.aiActionId, reason: 'undo' } },
        ]);
    });

    it('refuses to undo the opening, and to redo with nothing undone', () => {
      given(AdventureHistory.create())
        .when({ type: 'Undo', data: {} })
        .thenThrows(InvalidCommandError, 'invalid', /opening cannot be undone/);
      const history = AdventureHistory.create();
      history.turn('do', 'walk north');
      given(history)
        .when({ type: 'Redo', data: {} })
        .thenThrows(InvalidCommandError, 'invalid', /nothing to redo/);
    });

    it('redoes what undo hid', () => {
      const history = AdventureHistory.create();
      const { aiActionId } = history.turn('do', 'walk north');
      history.undo();
      given(history)
        .when({ type: 'Redo', data: {} })
        .then([{ type: 'HeadMoved', data: { from: 'opening', to: aiActionId, reason: 'redo' } }]);
    });

    it('answers 409 for undo, redo, edit, erase, move, correct and retcon while a turn is in flight', () => {
      const history = AdventureHistory.create();
      const { aiActionId } = history.turn('do', 'walk north', {
        reported: [{ type: 'enter', id: 'harbor', name: 'Harbor', kind: 'place' }],
      });
      history.undo();
      history.redo();
      history.act('do', 'wait');
      const busy = [
        { type: 'Undo', data: {} },
        { type: 'Redo', data: {} },
        { type: 'EditAction', data: { actionId: aiActionId, text: 'x' } },
        { type: 'EraseAction', data: { actionId: aiActionId } },
        { type: 'MoveHead', data: { actionId: 'opening' } },
        { type: 'CorrectNarrativeState', data: { correction: { op: 'addFact', text: 'x' } } },
        { type: 'RetconStateEvent', data: { actionId: aiActionId, index: 0 } },
      ] as const;
      for (const command of busy) {
        given(history).when(command).thenThrows(TurnInFlightError, 'conflict');
      }
    });
  });

  describe('MoveHead, EditAction, EraseAction', () => {
    it('refuses unknown actions as not found', () => {
      const commands: AdventureCommand[] = [
        { type: 'MoveHead', data: { actionId: 'ghost' } },
        { type: 'EditAction', data: { actionId: 'ghost', text: 'x' } },
        { type: 'EraseAction', data: { actionId: 'ghost' } },
      ];
      for (const command of commands) {
        given(AdventureHistory.create())
          .when(command)
          .thenThrows(NotFoundError, 'not_found', /action ghost not found/);
      }
    });

    it('edits with a fresh token count; erases once; never erases the opening', () => {
      const history = AdventureHistory.create();
      const { aiActionId } = history.turn('do', 'walk north');
      given(history)
        .when({ type: 'EditAction', data: { actionId: aiActionId, text: 'The fog lifts.' } })
        .then([
          {
            type: 'ActionEdited',
            data: { actionId: aiActionId, text: 'The fog lifts.', tokens: 3 },
          },
        ]);
      given(history)
        .when({ type: 'EraseAction', data: { actionId: 'opening' } })
        .thenThrows(InvalidCommandError, 'invalid', /opening cannot be erased/);
      history.erase(aiActionId);
      given(history)
        .when({ type: 'EraseAction', data: { actionId: aiActionId } })
        .then([]);
      given(history)
        .when({ type: 'MoveHead', data: { actionId: aiActionId } })
        .thenThrows(InvalidCommandError, 'invalid', /erased/);
    });

    it('moving to the head itself appends nothing', () => {
      given(AdventureHistory.create())
        .when({ type: 'MoveHead', data: { actionId: 'opening' } })
        .then([]);
    });
  });

  describe('CorrectNarrativeState and RetconStateEvent', () => {
    function withHarbor() {
      const history = AdventureHistory.create();
      const turn = history.turn('do', 'walk north', {
        reported: [
          { type: 'enter', id: 'harbor', name: 'Harbor', kind: 'place' },
          { type: 'enter', id: 'mira', name: 'Mira', kind: 'character', status: 'alive' },
        ],
      });
      return { history, ...turn };
    }

    it('anchors a correction on the head', () => {
      const { history, aiActionId } = withHarbor();
      const correction = { op: 'setStatus', id: 'mira', status: 'wounded' } as const;
      given(history)
        .when({ type: 'CorrectNarrativeState', data: { correction } })
        .then([
          { type: 'NarrativeStateCorrected', data: { anchorActionId: aiActionId, correction } },
        ]);
    });

    it("refuses a correction narrative's rules refuse, saying why", () => {
      const { history } = withHarbor();
      given(history)
        .when({
          type: 'CorrectNarrativeState',
          data: { correction: { op: 'rename', id: 'ghost', name: 'G' } },
        })
        .thenThrows(InvalidCommandError, 'invalid', /correction refused: .*ghost/);
    });

    it('refuses an anchor off the path', () => {
      const { history, aiActionId } = withHarbor();
      history.undo();
      given(history)
        .when({
          type: 'CorrectNarrativeState',
          data: { correction: { op: 'addFact', text: 'x' }, anchorActionId: aiActionId },
        })
        .thenThrows(InvalidCommandError, 'invalid', /not in the story at the head/);
    });

    it('given several corrections, when applied together, then each is decided on the state the ones before it leave', () => {
      const { history, aiActionId } = withHarbor();
      const rename = { op: 'rename', id: 'mira', name: 'Mira the Keeper' } as const;
      const wound = { op: 'setStatus', id: 'mira', status: 'wounded' } as const;
      given(history)
        .when({ type: 'ApplyCorrections', data: { corrections: [rename, wound] } })
        .then([
          {
            type: 'NarrativeStateCorrected',
            data: { anchorActionId: aiActionId, correction: rename },
          },
          {
            type: 'NarrativeStateCorrected',
            data: { anchorActionId: aiActionId, correction: wound },
          },
        ]);
    });

    it('given several corrections one of which is refused, when applied together, then none is', () => {
      const { history } = withHarbor();
      given(history)
        .when({
          type: 'ApplyCorrections',
          data: {
            corrections: [
              { op: 'addFact', text: 'The lamp is lit.' },
              { op: 'rename', id: 'ghost', name: 'G' },
            ],
          },
        })
        .thenThrows(InvalidCommandError, 'invalid', /correction refused: .*ghost/);
    });

    it('retcons an accepted event by index, once', () => {
      const { history, aiActionId, playerActionId } = withHarbor();
      given(history)
        .when({ type: 'RetconStateEvent', data: { actionId: aiActionId, index: 1 } })
        .then([{ type: 'StateEventRetconned', data: { actionId: aiActionId, index: 1 } }]);
      given(history)
        .when({ type: 'RetconStateEvent', data: { actionId: aiActionId, index: 2 } })
        .thenThrows(InvalidCommandError, 'invalid', /index must be 0 to 1/);
      given(history)
        .when({ type: 'RetconStateEvent', data: { actionId: playerActionId ?? '', index: 0 } })
        .thenThrows(InvalidCommandError, 'invalid', /not a narration/);
      history.retcon(aiActionId, 1);
      given(history)
        .when({ type: 'RetconStateEvent', data: { actionId: aiActionId, index: 1 } })
        .then([]);
    });
  });
});

function decideOnce(command: AdventureCommand, history?: AdventureHistory) {
  return decide(command, (history ?? new AdventureHistory()).state, wordCountTokens);
}

function narration(turnId: string, actionId: string, text = 'The fog thickens here.') {
  return narrationCommand(turnId, actionId, { text });
}
