import { decideMemory, InvalidCommandError, LIMITS } from './index';
import { AdventureHistory } from './testing';

describe('decideMemory: text limits', () => {
  const given = () => {
    const history = AdventureHistory.create();
    history.turn('do', 'step 1');
    return history.state;
  };

  it('given an adventure, when a memory of exactly memoryTextChars is added, then it is written at the head', () => {
    const state = given();
    const text = 'm'.repeat(LIMITS.memoryTextChars);
    expect(decideMemory({ type: 'AddMemory', data: { memoryId: 'a', text } }, state)).toEqual([
      {
        type: 'MemoryWritten',
        data: {
          memoryId: 'a',
          text,
          sourceStart: null,
          sourceEnd: null,
          anchorActionId: state.head,
          sourceActionIds: [],
          createdBy: 'player',
        },
      },
    ]);
  });

  it('given an adventure, when a memory one character over memoryTextChars is added, then it is refused naming the limit', () => {
    const state = given();
    const text = 'm'.repeat(LIMITS.memoryTextChars + 1);
    expect(() => decideMemory({ type: 'AddMemory', data: { memoryId: 'a', text } }, state)).toThrow(
      new InvalidCommandError(
        `text is longer than ${LIMITS.memoryTextChars} characters; keep it shorter`,
      ),
    );
  });

  it('given an adventure, when the summary is edited past memoryTextChars (but within textChars), then it is kept: a summary is not a memory', () => {
    const state = given();
    const text = 's'.repeat(LIMITS.memoryTextChars + 1);
    const [event] = decideMemory({ type: 'EditSummary', data: { summaryId: 's', text } }, state);
    expect(event).toMatchObject({ type: 'SummaryWritten', data: { text, handEdited: true } });
  });

  it('given a summary version, when the summary is edited elsewhere under the id it holds, then it is refused and nothing is written', () => {
    const history = AdventureHistory.create();
    history.turn('do', 'step 1');
    history.append(
      ...decideMemory(
        { type: 'EditSummary', data: { summaryId: 's', text: 'one' } },
        history.state,
      ),
    );
    history.turn('do', 'step 2');
    expect(() =>
      decideMemory({ type: 'EditSummary', data: { summaryId: 's', text: 'two' } }, history.state),
    ).toThrow(new InvalidCommandError('summary s already exists; send a new id'));
  });
});
