// The idempotency rule of the commands that start a turn (an action, a continue, a retry). The
// command's key is the client's id: the id of the event that starts the turn, from which the turn
// id is derived. A resend of the same request is answered with that original event, never a second
// turn; the same key with another request is refused. The command handler applies the rule (it
// reads the original from the log); the API only parses, runs scripts and announces.

import type { AdventureCommand, Keyed } from './adventure.commands';
import { UnprocessableError } from './adventure.errors';
import type { RecordedAdventureEvent } from './adventure.events';
import { turnStatus } from './adventure.queries';
import { nodeOf, type AdventureState } from './adventure.state';
import { EVENT_CATALOGUE, isAdventureEventType } from './event.catalogue';

/** The commands that start a turn, each with the turn id the key was turned into. */
export type TurnStartCommand = Keyed<
  Extract<AdventureCommand, { type: 'SubmitAction' } | { type: 'RequestRetry' }>
>;

export function isTurnStartCommand(command: { type: string }): command is TurnStartCommand {
  return command.type === 'SubmitAction' || command.type === 'RequestRetry';
}

const PLAYER_ACTIONS: ReadonlySet<string> = new Set(['do', 'say', 'story']);

/**
 * The projection shows that the request this command's key stands for already started a turn:
 * the key names a player's action of a turn, or the command's turn is known. False is no proof of
 * a new request: the projection keeps only recent turns' outcomes, so an older one is caught at
 * the append (its id is stored) or by the decider's refusal, and read from the log.
 */
export function isTurnResend(state: AdventureState, command: TurnStartCommand): boolean {
  const node = command.key === undefined ? undefined : nodeOf(state, command.key);
  if (node) return PLAYER_ACTIONS.has(node.type) && node.turnId !== null;
  return turnStatus(state, command.data.turnId) !== null;
}

/**
 * onInput runs before an action only when it could start a turn: the adventure exists and has an
 * enabled input script, and the request is neither a resend nor one the decider will refuse for
 * a turn in flight. Scripts are not idempotent, so a resend must not run them again.
 */
export function runsInputScripts(state: AdventureState, command: TurnStartCommand): boolean {
  if (command.type !== 'SubmitAction' || command.data.inputType === 'continue') return false;
  if (state.id === null) return false;
  if (!state.scripts.some((s) => s.enabled && s.input.trim() !== '')) return false;
  if (isTurnResend(state, command)) return false;
  return turnStatus(state, command.data.turnId) === null && !state.inFlight;
}

/**
 * The answer to a request whose key names `stored` (upcast), written with `storedFingerprint` in
 * its metadata: the original when it started a turn for the same request; null when the event
 * starts no turn (the key is a narration's id, say: the decider refuses that as it is). The same
 * key with another request is an UnprocessableError (422): a key promises one request. An event
 * written before fingerprints were recorded answers as the original.
 */
export function originalTurnStart(
  key: string,
  stored: RecordedAdventureEvent,
  storedFingerprint: unknown,
  fingerprint: string,
): RecordedAdventureEvent | null {
  if (!isAdventureEventType(stored.type) || EVENT_CATALOGUE[stored.type].turn !== 'starts') {
    return null;
  }
  if (typeof storedFingerprint === 'string' && storedFingerprint !== fingerprint) {
    throw new UnprocessableError(
      `id ${key} was already used for a different request (${describeStarted(stored)}); resend the same body with that id, or send a new id`,
    );
  }
  return stored;
}

function describeStarted(event: RecordedAdventureEvent): string {
  if (event.type !== 'PlayerActed') return 'a retry';
  const inputType = event.data.inputType;
  return inputType === 'continue' ? 'a continue' : `a "${inputType}" action with other text`;
}
