import { AID_MESSAGES, inputForScripts, inputFromScripts, judgeHookResult } from './hook-result';

describe('judgeHookResult', () => {
  it('input: stop, null text and "" stop the turn; "" with the notice (C5, C6)', () => {
    expect(judgeHookResult('input', 'x', { text: 'x', stop: true })).toEqual({ kind: 'stop' });
    expect(judgeHookResult('input', 'x', { text: null, stop: false })).toEqual({ kind: 'stop' });
    expect(judgeHookResult('input', 'x', { text: '', stop: false })).toEqual({
      kind: 'stop',
      note: AID_MESSAGES.emptyInput,
    });
    expect(judgeHookResult('input', 'x', { text: 'y!', stop: false })).toEqual({
      kind: 'text',
      text: 'y!',
    });
  });

  it('context: "" keeps the incoming text; stop stops with AID\'s wording (C7, C10)', () => {
    expect(judgeHookResult('context', 'view', { text: '', stop: false })).toEqual({
      kind: 'text',
      text: 'view',
    });
    expect(judgeHookResult('context', 'view', { text: 'view', stop: true })).toEqual({
      kind: 'stop',
      message: AID_MESSAGES.contextStopped,
    });
  });

  it('output: "" fails keeping the prose; stop is ignored (C12)', () => {
    expect(judgeHookResult('output', 'prose', { text: '', stop: false })).toMatchObject({
      kind: 'failed',
    });
    expect(judgeHookResult('output', 'prose', { text: 'stop', stop: true })).toEqual({
      kind: 'text',
      text: 'prose',
      note: 'stop is ignored in the output hook',
    });
  });

  it('output: a blank " " is text like any other (Hashtag-DnD hides a command turn\'s reply with it)', () => {
    expect(judgeHookResult('output', 'The dragon roars.', { text: ' ', stop: false })).toEqual({
      kind: 'text',
      text: ' ',
    });
  });

  it("refuses text that is not a string or is over the hook's limit", () => {
    expect(judgeHookResult('input', 'x', { text: { a: 1 }, stop: false })).toMatchObject({
      kind: 'invalid',
    });
    expect(judgeHookResult('input', 'x', { text: 'y'.repeat(20_001), stop: false })).toMatchObject({
      kind: 'invalid',
    });
  });
});

describe('the AID shape of onInput text', () => {
  it('wraps do and say in newlines for the script and takes one of each off the result', () => {
    expect(inputForScripts('do', '> You climb.')).toBe('\n> You climb.\n');
    expect(inputFromScripts('do', '\n> You climb.!\n')).toBe('> You climb.!');
    expect(inputFromScripts('say', '> You say "hi."')).toBe('> You say "hi."');
    expect(inputForScripts('story', ' The sea.')).toBe(' The sea.');
    expect(inputFromScripts('story', '\nThe sea.\n')).toBe('\nThe sea.\n');
  });
});
