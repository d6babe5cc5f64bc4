import { actionTextFromEvent, storyPath } from '@chronicle/adventure';
import { AdventureHistory } from '@chronicle/adventure/testing';
import { hypotheticalTurn } from './hypothetical-turn';
import { buildTurnContext, type ActionTextReader } from './turn-context';

/** The log's texts by version, as the repository reads them; records what it was asked for. */
function readerOf(history: AdventureHistory): ActionTextReader & { asked: string[] } {
  const asked: string[] = [];
  return {
    asked,
    readActionTexts: async (_id, entries) =>
      entries.map((entry) => {
        asked.push(entry.id);
        const event = history.events.find((e) => e.version === entry.textVersion);
        const text = event ? actionTextFromEvent(event, entry.id) : null;
        if (text === null) throw new Error(`no text for ${entry.id}`);
        return text;
      }),
  };
}

describe('hypotheticalTurn', () => {
  it('given a narrated story, when an action is supposed, then the prompt carries it after the story, as the turn would store it, and the story is untouched', async () => {
    const history = AdventureHistory.create();
    history.turn('do', 'climb the stairs', { text: 'The stairs wind up into the dark.' });
    const before = history.state;
    const pathLength = before.path.length;
    const store = readerOf(history);

    const turn = hypotheticalTurn(store, before, { type: 'do', text: 'you open the hatch' });
    const built = await buildTurnContext(turn.texts, turn.state, { defaultModel: 'm' });

    expect(built.story).toMatch(/The stairs wind up into the dark\.\s+> You open the hatch\./);
    expect(turn.state.inFlight).not.toBeNull();
    expect(storyPath(turn.state).at(-1)?.id).toBe(turn.actionId);
    // The supposed text is never asked of the log, and nothing of it reached the given state.
    expect(store.asked).not.toContain(turn.actionId);
    expect(before.path).toHaveLength(pathLength);
    expect(before.inFlight).toBeNull();
    expect(hypotheticalTurn(store, before, { type: 'do', text: 'x' }).actionId).toBe(turn.actionId);
  });

  it('given a continue, when it is supposed, then the turn is in flight with no action and the log reader is used as is', () => {
    const history = AdventureHistory.create();
    history.turn('do', 'wait', { text: 'Rain.' });
    const store = readerOf(history);

    const turn = hypotheticalTurn(store, history.state, { type: 'continue' });

    expect(turn.actionId).toBeNull();
    expect(turn.texts).toBe(store);
    expect(turn.state.inFlight).not.toBeNull();
  });

  it('given an action a turn would refuse, when it is supposed, then the refusal is the turn’s', () => {
    const history = AdventureHistory.create();
    history.turn('do', 'wait', { text: 'Rain.' });
    const store = readerOf(history);

    expect(() => hypotheticalTurn(store, history.state, { type: 'say', text: ' "" ' })).toThrow(
      'text is empty for a say action',
    );
    history.act('do', 'listen');
    expect(() => hypotheticalTurn(store, history.state, { type: 'do', text: 'wait' })).toThrow(
      /still being narrated/,
    );
  });
});
