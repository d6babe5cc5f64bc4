// Given/when/then for the adventure decider: given a history, when a command is decided, then
// these events (or this domain error). Uses jest's `expect`, so only specs import it.

import type { AdventureCommand, DecideContext } from '../adventure.commands';
import { decide } from '../adventure.decider';
import type { DomainError } from '../adventure.errors';
import type { AdventureEvent, RecordedAdventureEvent } from '../adventure.events';
import { project } from '../adventure.projector';
import type { AdventureState } from '../adventure.state';
import { AdventureHistory, wordCountTokens } from './adventure.factory';

type ErrorClass = abstract new (...args: never[]) => DomainError;

export function given(history: AdventureHistory | RecordedAdventureEvent[] | AdventureState) {
  const state =
    history instanceof AdventureHistory
      ? history.state
      : Array.isArray(history)
        ? project(history)
        : history;
  return {
    when(command: AdventureCommand, context: DecideContext = wordCountTokens) {
      const run = () => decide(command, state, context);
      return {
        then(expected: AdventureEvent[]): void {
          expect(run()).toEqual(expected);
        },
        thenThrows(errorClass: ErrorClass, kind: DomainError['kind'], message?: RegExp): void {
          let caught: unknown;
          try {
            run();
          } catch (error) {
            caught = error;
          }
          expect(caught).toBeInstanceOf(errorClass);
          expect((caught as DomainError).kind).toBe(kind);
          if (message) expect((caught as Error).message).toMatch(message);
        },
      };
    },
  };
}
