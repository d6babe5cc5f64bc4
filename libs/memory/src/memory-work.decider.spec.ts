import {
  InvalidCommandError,
  NotFoundError,
  initialState,
  type AdventureState,
  type MemoryEvent,
} from '@chronicle/adventure';
import { AdventureHistory } from '@chronicle/adventure/testing';
import {
  decideMemoryWork,
  memoryBlocks,
  summaryPlan,
  type MemoryWorkCommand,
  type WriteMemory,
} from './index';

// Given an adventure, when the memory worker sends what the model wrote, then these events:
// the rules that say whether memory work is still due when its result comes back.

function played(turns: number): AdventureHistory {
  const history = AdventureHistory.create();
  for (let turn = 1; turn <= turns; turn++) history.turn('do', `step ${turn}`);
  return history;
}

function given(state: AdventureState) {
  return {
    when(command: MemoryWorkCommand) {
      const run = () => decideMemoryWork(command, state);
      return {
        then: (expected: MemoryEvent[]) => expect(run()).toEqual(expected),
        thenThrows: (error: new (...args: never[]) => Error, message: RegExp) => {
          expect(run).toThrow(error);
          expect(run).toThrow(message);
        },
      };
    },
  };
}

function writeMemoryOf(history: AdventureHistory, index = 0, text = 'Mira lit the lamp.') {
  const block = memoryBlocks(history.state)[index];
  const command: WriteMemory = {
    type: 'WriteMemory',
    data: {
      memoryId: `memory-${block.anchorActionId}`,
      text,
      block: {
        anchorActionId: block.anchorActionId,
        sourceStart: block.sourceStart,
        sourceEnd: block.sourceEnd,
      },
    },
  };
  return { block, command };
}

describe('memory worker decider', () => {
  describe('WriteMemory', () => {
    it('given the oldest block due, when its memory is written, then it is recorded as the worker’s, over that block', () => {
      const history = played(6);
      const { block, command } = writeMemoryOf(history);
      given(history.state)
        .when(command)
        .then([
          {
            type: 'MemoryWritten',
            data: {
              memoryId: command.data.memoryId,
              text: 'Mira lit the lamp.',
              sourceStart: block.sourceStart,
              sourceEnd: block.sourceEnd,
              anchorActionId: block.anchorActionId,
              sourceActionIds: block.entries.map((entry) => entry.id),
              createdBy: 'worker',
            },
          },
        ]);
    });

    it('given a block another run has already written, when its memory comes back, then nothing is appended', () => {
      const history = played(6);
      const { command } = writeMemoryOf(history);
      history.append(...decideMemoryWork(command, history.state));
      given(history.state).when(command).then([]);
    });

    it('given two blocks due, when the second is written first, then nothing is appended: memories are written in story order', () => {
      const history = played(6);
      const { command } = writeMemoryOf(history, 1);
      given(history.state).when(command).then([]);
    });

    it('given a story undone past the block, when its memory comes back, then nothing is appended', () => {
      const history = played(6);
      const { command } = writeMemoryOf(history);
      for (let i = 0; i < 4; i++) history.undo();
      expect(memoryBlocks(history.state)).toEqual([]);
      given(history.state).when(command).then([]);
    });

    it('given a block due, when the model wrote nothing, then it is refused', () => {
      const history = played(6);
      const { command } = writeMemoryOf(history, 0, '  ');
      given(history.state)
        .when(command)
        .thenThrows(InvalidCommandError, /text is required/);
    });
  });

  describe('WriteSummary', () => {
    function summaryCommand(history: AdventureHistory, startsFrom: string | null = null) {
      const plan = summaryPlan(history.state);
      if (!plan) throw new Error('no summary due');
      return {
        plan,
        command: {
          type: 'WriteSummary',
          data: {
            summaryId: 'summary-1',
            text: 'The keeper is gone; Mira keeps the light.',
            plan: {
              anchorActionId: plan.anchorActionId,
              sourceStart: plan.sourceStart,
              sourceEnd: plan.sourceEnd,
              startsFrom,
            },
          },
        } as const,
      };
    }

    it('given a summary update due, when it is written, then it covers the actions past the cursor', () => {
      const history = played(7);
      const { plan, command } = summaryCommand(history);
      given(history.state)
        .when(command)
        .then([
          {
            type: 'SummaryWritten',
            data: {
              summaryId: 'summary-1',
              text: command.data.text,
              anchorActionId: plan.anchorActionId,
              sourceStart: plan.sourceStart,
              sourceEnd: plan.sourceEnd,
              handEdited: false,
              replacesSummaryId: null,
              chapterIds: [],
            },
          },
        ]);
    });

    it('given the player edited the summary while the model wrote, when the update comes back, then nothing is appended', () => {
      const history = played(7);
      const { command } = summaryCommand(history);
      history.append({
        type: 'SummaryWritten',
        data: {
          summaryId: 'edit',
          text: 'My own summary.',
          anchorActionId: history.head,
          sourceStart: null,
          sourceEnd: null,
          handEdited: true,
          replacesSummaryId: null,
          chapterIds: [],
        },
      });
      given(history.state).when(command).then([]);
    });

    it('given too little story past the cursor, when an update comes back, then nothing is appended', () => {
      const history = played(7);
      const { command } = summaryCommand(history);
      history.append(...decideMemoryWork(command, history.state));
      given(history.state).when(command).then([]);
    });
  });

  describe('WriteRegeneratedSummary', () => {
    it('given any adventure, when a regenerated summary is written, then it is recorded at the span given', () => {
      const history = played(2);
      const span = { anchorActionId: history.head, sourceStart: 0, sourceEnd: 4 };
      given(history.state)
        .when({
          type: 'WriteRegeneratedSummary',
          data: { summaryId: 's', text: 'All so far.', span },
        })
        .then([
          {
            type: 'SummaryWritten',
            data: {
              summaryId: 's',
              text: 'All so far.',
              ...span,
              handEdited: false,
              replacesSummaryId: null,
              chapterIds: [],
            },
          },
        ]);
    });
  });

  describe('no eviction', () => {
    it('given more memories than the old capacity setting, when the worker writes the next, then nothing is forgotten', () => {
      const history = AdventureHistory.create({ settings: { memoryCapacity: 1 } });
      for (let turn = 1; turn <= 9; turn++) history.turn('do', `step ${turn}`);
      for (let i = 0; i < 3; i++) {
        const { command } = writeMemoryOf(history);
        const events = decideMemoryWork(command, history.state);
        expect(events.map((event) => event.type)).toEqual(['MemoryWritten']);
        history.append(...events);
      }
      expect(history.state.memory.memories.map((m) => m.forgotten)).toEqual([false, false, false]);
    });
  });

  it('given no adventure, when any memory work comes back, then it is not found', () => {
    const { command } = writeMemoryOf(played(6));
    given(initialState())
      .when(command)
      .thenThrows(NotFoundError, /create it first/);
  });
});
