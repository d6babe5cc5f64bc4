import { lastNarrationOf, takesOf } from './adventure.queries';
import { AdventureHistory } from './testing/adventure.factory';

describe('the takes of a narration (the client’s take pager)', () => {
  it('given a turn retried twice, when read, then its three takes are listed oldest first', () => {
    const history = AdventureHistory.create();
    history.turn('do', 'open the door', { text: 'The door creaks.' });
    const first = lastNarrationOf(history.state)!.id;
    const second = history.retry({ text: 'The door sticks.' });
    const third = history.retry({ text: 'The door is gone.' });

    expect(lastNarrationOf(history.state)?.id).toBe(third);
    expect(takesOf(history.state, third)).toEqual([first, second, third]);
    expect(takesOf(history.state, first)).toEqual([first, second, third]);
  });

  it('given an older take selected again, then it is the last narration and the list is unchanged', () => {
    const history = AdventureHistory.create();
    history.turn('do', 'open the door', { text: 'The door creaks.' });
    const first = lastNarrationOf(history.state)!.id;
    const second = history.retry({ text: 'The door sticks.' });
    history.run({ type: 'MoveHead', data: { actionId: first } });

    expect(lastNarrationOf(history.state)?.id).toBe(first);
    expect(takesOf(history.state, first)).toEqual([first, second]);
  });

  it('given an erased take or a player action, then only narrations that are still there count', () => {
    const history = AdventureHistory.create();
    const { playerActionId } = history.turn('do', 'open the door', { text: 'The door creaks.' });
    const first = lastNarrationOf(history.state)!.id;
    const second = history.retry({ text: 'The door sticks.' });
    history.run({ type: 'MoveHead', data: { actionId: first } });
    history.erase(second);

    expect(takesOf(history.state, first)).toEqual([first]);
    expect(takesOf(history.state, playerActionId!)).toEqual([]);
  });

  it('given no narration yet, then there is no last narration', () => {
    expect(lastNarrationOf(AdventureHistory.create().state)).toBeNull();
  });
});
