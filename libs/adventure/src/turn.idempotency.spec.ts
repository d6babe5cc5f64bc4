import { UnprocessableError } from './adventure.errors';
import type { RecordedAdventureEvent } from './adventure.events';
import { decideScript } from './script.decider';
import { AdventureHistory } from './testing';
import {
  isTurnResend,
  originalTurnStart,
  runsInputScripts,
  type TurnStartCommand,
} from './turn.idempotency';

const submit = (
  key: string,
  turnId: string,
  inputType: 'do' | 'continue' = 'do',
): TurnStartCommand => ({
  type: 'SubmitAction',
  key,
  data: { turnId, inputType, text: 'wave', actionId: key },
});

describe('isTurnResend', () => {
  it('given an action in the tree, when its key is sent again, then it is a resend', () => {
    const history = AdventureHistory.create();
    history.act('do', 'wave', { actionId: 'a-1', turnId: 't-1' });
    expect(isTurnResend(history.state, submit('a-1', 't-1'))).toBe(true);
    history.narrate();
    expect(isTurnResend(history.state, submit('a-1', 't-1'))).toBe(true);
  });

  it('given a continue, when its key is sent again, then its turn shows the resend', () => {
    const history = AdventureHistory.create();
    history.turn('do', 'wave');
    history.act('continue', '', { actionId: 'c-1', turnId: 't-c' });
    expect(isTurnResend(history.state, submit('c-1', 't-c', 'continue'))).toBe(true);
  });

  it('given a narration, when its id is sent as a key, then it is no resend (the decider refuses it)', () => {
    const history = AdventureHistory.create();
    const { aiActionId } = history.turn('do', 'wave');
    expect(isTurnResend(history.state, submit(aiActionId, 't-new'))).toBe(false);
  });

  it('given a new key, then it is no resend', () => {
    const history = AdventureHistory.create();
    history.turn('do', 'wave');
    expect(isTurnResend(history.state, submit('a-new', 't-new'))).toBe(false);
    expect(
      isTurnResend(history.state, { type: 'RequestRetry', key: 'r-new', data: { turnId: 't-r' } }),
    ).toBe(false);
  });
});

describe('runsInputScripts', () => {
  function withInputScript() {
    const history = AdventureHistory.create();
    history.append(
      ...decideScript(
        { type: 'AddScript', data: { script: { id: 's', name: 'S', input: 'modifier(text)' } } },
        history.state,
      ),
    );
    return history;
  }

  it('given an enabled input script, when a new action comes, then onInput runs', () => {
    expect(runsInputScripts(withInputScript().state, submit('a-1', 't-1'))).toBe(true);
  });

  it('given no input script, a continue, a resend or a turn in flight, then onInput does not run', () => {
    expect(runsInputScripts(AdventureHistory.create().state, submit('a-1', 't-1'))).toBe(false);
    const history = withInputScript();
    expect(runsInputScripts(history.state, submit('c-1', 't-1', 'continue'))).toBe(false);
    history.act('do', 'wave', { actionId: 'a-1', turnId: 't-1' });
    expect(runsInputScripts(history.state, submit('a-1', 't-1'))).toBe(false);
    expect(runsInputScripts(history.state, submit('a-2', 't-2'))).toBe(false);
  });
});

describe('originalTurnStart', () => {
  const acted = (inputType: 'do' | 'continue'): RecordedAdventureEvent => ({
    type: 'PlayerActed',
    version: 7,
    data: {
      turnId: 't-1',
      inputType,
      action:
        inputType === 'continue' ? null : { id: 'a-1', type: 'do', text: 'You wave.', tokens: 2 },
    },
  });

  it('given the same request, then the stored event is the answer', () => {
    expect(originalTurnStart('a-1', acted('do'), 'fp', 'fp')).toEqual(acted('do'));
  });

  it('given an event written before fingerprints, then it answers as the original', () => {
    expect(originalTurnStart('a-1', acted('do'), undefined, 'fp')).toEqual(acted('do'));
  });

  it('given another request under the key, then a 422 names what the key was used for', () => {
    expect(() => originalTurnStart('a-1', acted('do'), 'fp-1', 'fp-2')).toThrow(
      new UnprocessableError(
        'id a-1 was already used for a different request (a "do" action with other text); resend the same body with that id, or send a new id',
      ),
    );
    expect(() => originalTurnStart('a-1', acted('continue'), 'fp-1', 'fp-2')).toThrow(
      /\(a continue\)/,
    );
    const retry: RecordedAdventureEvent = {
      type: 'RetryRequested',
      version: 9,
      data: { turnId: 't-1', replacesActionId: 'n-1' },
    };
    expect(() => originalTurnStart('a-1', retry, 'fp-1', 'fp-2')).toThrow(/\(a retry\)/);
  });

  it('given a key that names an event starting no turn, then there is no original', () => {
    const narration = {
      type: 'NarrationCancelled',
      version: 8,
      data: { turnId: 't-1' },
    } as RecordedAdventureEvent;
    expect(originalTurnStart('a-1', narration, 'fp-1', 'fp-2')).toBeNull();
  });
});
