import { changedMessages, checkState, messagesOf, scriptMemoryOf } from './script-state';

describe('checkState', () => {
  it('given the same JSON, then unchanged; given new JSON, then changed', () => {
    expect(checkState({ n: 1 }, '{"n":1}')).toEqual({
      kind: 'ok',
      state: { n: 1 },
      changed: false,
    });
    expect(checkState({ n: 1 }, '{"n":2}')).toEqual({ kind: 'ok', state: { n: 2 }, changed: true });
  });

  it('given a non-object state (state = 5), then the previous state is kept (C13)', () => {
    for (const json of ['5', 'null', '[1]', '"s"']) {
      expect(checkState({ n: 1 }, json)).toMatchObject({
        kind: 'ok',
        state: { n: 1 },
        changed: false,
      });
    }
  });

  it('given unserialisable, oversize or prototype-reaching state, then invalid (S6, S11)', () => {
    expect(checkState({}, undefined)).toMatchObject({ kind: 'invalid' });
    expect(checkState({}, JSON.stringify({ s: 'x'.repeat(300_000) }))).toMatchObject({
      kind: 'invalid',
      error: 'state is over 262144 characters serialised',
    });
    expect(checkState({}, '{"a":{"__proto__":{"x":1}}}')).toMatchObject({ kind: 'invalid' });
  });
});

describe('state.memory and state.message', () => {
  it('reads only string memory fields', () => {
    expect(scriptMemoryOf({ memory: { context: 'c', authorsNote: 7, frontMemory: 'f' } })).toEqual({
      context: 'c',
      frontMemory: 'f',
    });
    expect(scriptMemoryOf({ memory: 'x' })).toEqual({});
  });

  it('normalises a string, {text, visibleTo} and an array', () => {
    expect(messagesOf({ message: 'hi' })).toEqual([{ text: 'hi' }]);
    expect(messagesOf({ message: { text: 'a', visibleTo: ['Ada', 3] } })).toEqual([
      { text: 'a', visibleTo: ['Ada'] },
    ]);
    expect(messagesOf({ message: ['a', { text: 'b' }, 5] })).toEqual([
      { text: 'a' },
      { text: 'b' },
    ]);
  });

  it('posts a message only when it differs from the previous value (C15)', () => {
    expect(changedMessages({}, { message: 'a' })).toEqual([{ text: 'a' }]);
    expect(changedMessages({ message: 'a' }, { message: 'a' })).toEqual([]);
    expect(changedMessages({ message: 'a' }, { message: 'b' })).toEqual([{ text: 'b' }]);
  });
});
