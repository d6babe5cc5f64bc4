// max-lines: starting a turn (act, retry, resends, onInput scripts, announcing) is one flow read top
// to bottom; the room's answers (roomAnswer, roomResend) are its last ~70 lines and are the part to
// move out when audiences (who sees a held or submitted action) change them.
import { randomUUID } from 'node:crypto';
import { Inject, Injectable, Logger } from '@nestjs/common';
import {
  actingCharacterOf,
  ConflictError,
  isRoomAdventure,
  nodeOf,
  roomActionPlace,
  formatPlayerInput,
  runsInputScripts,
  type ScriptedInput,
  type PlayerActionType,
  scriptStreamFrames,
  type AdventureState,
  type InputType,
  type PlayerActed,
  type RecordedAdventureEvent,
  type TurnStartCommand,
} from '@chronicle/adventure';
import { AdventureCommandHandler, scriptHookBase } from '@chronicle/adventure-store';
import { LruCache } from '@chronicle/platform';
import {
  SCRIPT_RUN_LIMITS,
  SandboxUnavailableError,
  ScriptSandboxPool,
  type ScriptRunLimits,
} from '@chronicle/script-sandbox';
import {
  inputForScripts,
  inputFromScripts,
  runHookChain,
  scriptLimitsFor,
  type HookChainResult,
} from '@chronicle/scripting';
import { ScriptsUnavailableError } from '../scripts/scripts.use-case';
import { currentLogContext } from '@chronicle/platform';
import { TurnStreamPublisher, type TurnFrame } from '@chronicle/turn-stream';
import { requestReceivedAt } from '../http/correlation.middleware';
import { requestMetadata } from '../http/request-actor';
import { roomStreamPath, turnStreamPath } from './adventure.reader';
import { requestFingerprint, turnIdFor } from './turn-id';

/** The answer to an accepted turn (202): where to watch it. */
export interface TurnAccepted {
  turnId: string;
  /** The player action written; null for continue and retry. */
  actionId: string | null;
  /** The stream version right after the event that started the turn. */
  version: number;
  stream: string;
  /** A room under `free`: the action waits for the next turn (`turnId`), which starts when this one ends. */
  held?: true;
  /** A room under `round`: the round the action was submitted to; `turnId` is the turn that narrates it. */
  roundId?: string;
  submitted?: true;
  /** A room under `round`: this submission closed the round, and its turn has started. */
  closed?: true;
}

/** The request an idempotency key stands for, as its fingerprint covers it. */
type TurnRequest = { kind: 'act'; type: InputType; text: string } | { kind: 'retry' };

/**
 * Starts turns: a player action (or continue) and a retry, as parse → onInput scripts → handle →
 * announce. The client's id is the idempotency key: it is the id of the event that starts the
 * turn, and the turn id is derived from it in the adventure's namespace (turn-id.ts). The command
 * handler answers a resend with the original — never a second turn, never a 409, even when two
 * copies race — and refuses another body under the same key with a 422 (turn.idempotency.ts).
 */
@Injectable()
export class SubmitActionUseCase {
  private readonly logger = new Logger('turns');
  /**
   * onInput results of turns the client named but the log does not hold yet, by turn and
   * request: scripts are not idempotent (Math.random, counters), so a resend after a 409 (the
   * handler's conflict retries ran out) or a 503 reuses the first run instead of running the
   * scripts again. Per process: a resend that reaches another API instance runs them once more.
   */
  private readonly inputResults = new LruCache<string, ScriptedInput>({
    capacity: 1_000,
    ttlMs: 10 * 60_000,
  });

  constructor(
    private readonly adventures: AdventureCommandHandler,
    private readonly stream: TurnStreamPublisher,
    private readonly sandbox: ScriptSandboxPool,
    @Inject(SCRIPT_RUN_LIMITS) private readonly scriptLimits: ScriptRunLimits,
  ) {}

  async act(
    adventureId: string,
    input: { type: InputType; text?: string; id?: string },
    actorId?: string,
  ): Promise<TurnAccepted> {
    const clientId = input.id?.toLowerCase();
    const eventId = clientId ?? randomUUID();
    const turnId = turnIdFor(adventureId, eventId);
    const request: TurnRequest = {
      kind: 'act',
      type: input.type,
      text: input.type === 'continue' ? '' : (input.text ?? ''),
    };
    // continue skips onInput (AID runs it after do/say/story only).
    const fingerprint = requestFingerprint(request);
    const resultKey = clientId === undefined ? null : `${turnId}\u0000${fingerprint}`;
    const remembered = resultKey === null ? undefined : this.inputResults.get(resultKey);
    const command: TurnStartCommand & { type: 'SubmitAction' } = {
      type: 'SubmitAction',
      key: eventId,
      data: {
        turnId,
        inputType: input.type,
        text: input.text ?? '',
        actionId: eventId,
        // In a room the turn policy reads who sent it; a one-player adventure ignores it.
        ...(actorId !== undefined && { actorId }),
      },
    };
    const scripted =
      input.type === 'continue' || remembered
        ? { script: remembered }
        : await this.runInputScripts(adventureId, command, input.type, input.text ?? '');
    const script = scripted.script;
    if (script && resultKey !== null) this.inputResults.set(resultKey, script);
    const accepted = await this.start(
      adventureId,
      fingerprint,
      scripted.state,
      script ? { ...command, data: { ...command.data, script } } : command,
    );
    // In the log now: a resend finds the turn there and runs nothing.
    if (resultKey !== null) this.inputResults.delete(resultKey);
    return accepted;
  }

  /**
   * onInput, before PlayerActed (docs/scripting.md §3.1): the adventure's enabled scripts on the formatted
   * input, when they may run (`runsInputScripts`: a resend runs nothing). No script when there is
   * nothing to run; the decider then writes the typed text as before. With no script run, the
   * projection it read is handed on (`state`): the decision reads it too, so a turn costs one
   * load (the append at its version proves it current). After a script run, which takes time,
   * the decision loads again.
   */
  private async runInputScripts(
    adventureId: string,
    command: TurnStartCommand,
    type: PlayerActionType,
    typed: string,
  ): Promise<{ script?: ScriptedInput; state?: AdventureState }> {
    const state = await this.adventures.get(adventureId);
    const none = { state };
    if (!runsInputScripts(state, command)) return none;
    // In a room the hook sees the action as it is stored, about the actor's character, and
    // who acts (info.actor). The command names its actor once room turns send one.
    const data = command.type === 'SubmitAction' ? command.data : {};
    const actor = actingCharacterOf(
      state,
      'actorId' in data && typeof data.actorId === 'string' ? data.actorId : undefined,
    );
    let text: string | null;
    try {
      text = formatPlayerInput(type, typed, actor);
    } catch {
      return none; // the decider refuses the input with its own message
    }
    if (text === null) return none;
    const base = await scriptHookBase(this.adventures, state);
    if (!base) return none;
    const limits = scriptLimitsFor(state.settings, this.scriptLimits);
    let chain: HookChainResult;
    try {
      chain = await runHookChain(this.sandbox, {
        owner: base.owner,
        hook: 'input',
        scripts: base.scripts,
        text: inputForScripts(type, text),
        states: base.states,
        cards: base.cards,
        history: base.history,
        info: {
          actionCount: base.actionCount,
          characterNames: base.characterNames,
          ...(base.characters && { characters: base.characters }),
          ...(actor && { actor: actor.name }),
        },
        memory: base.memory,
        // The whole turn's budget: the worker's hooks get what this run leaves (turnBudgetLeft).
        budgetMs: limits.turnBudgetMs,
        hookTimeoutMs: limits.hookTimeoutMs,
        memoryLimitMb: limits.memoryLimitMb,
        newCardId: () => randomUUID(),
      });
    } catch (error) {
      // No sandbox process could run the scripts: an infrastructure fault, 503 + Retry-After.
      if (error instanceof SandboxUnavailableError) throw new ScriptsUnavailableError();
      throw error;
    }
    const stoppedBy = chain.stopped
      ? ([...chain.runs].reverse().find((r) => r.outcome === 'stopped')?.scriptId ?? null)
      : null;
    const script: ScriptedInput = {
      text: inputFromScripts(type, chain.text),
      stopped: chain.stopped,
      stopMessage: chain.stopMessage ?? '',
      stoppedBy,
      runs: chain.runs.map((run) => ({
        scriptId: run.scriptId,
        hook: run.hook,
        outcome: run.outcome,
        textChanged: run.textChanged,
        ms: Math.round(run.ms * 100) / 100,
        cpuMs: Math.round(run.cpuMs * 100) / 100,
        logs: run.logs,
        ...(run.error ? { error: run.error } : {}),
      })),
      states: chain.states,
      cardOps: chain.cardOps,
      messages: chain.messages,
    };
    return { script };
  }

  async retry(adventureId: string, input: { id?: string }): Promise<TurnAccepted> {
    const clientId = input.id?.toLowerCase();
    const eventId = clientId ?? randomUUID();
    const turnId = turnIdFor(adventureId, eventId);
    const fingerprint = requestFingerprint({ kind: 'retry' } satisfies TurnRequest);
    return this.start(adventureId, fingerprint, undefined, {
      type: 'RequestRetry',
      key: eventId,
      data: { turnId },
    });
  }

  /**
   * One load (`loaded`, when the caller read it just now): the handler's resend check and its
   * decision read the same projection, and the append at its version proves it current.
   */
  private async start(
    adventureId: string,
    fingerprint: string,
    loaded: AdventureState | undefined,
    command: TurnStartCommand,
  ): Promise<TurnAccepted> {
    const turnId = command.data.turnId;
    currentLogContext().turnId = turnId;
    const state = loaded ?? (await this.adventures.get(adventureId));
    let handled: Awaited<ReturnType<AdventureCommandHandler['handle']>>;
    try {
      // The narrate job follows from the event (see `jobsAfter`).
      handled = await this.adventures.handle(
        adventureId,
        command,
        // requestedAt goes with the narrate job: POST → model request is measured from it.
        { ...requestMetadata(), requestedAt: requestReceivedAt() },
        { state, fingerprint },
      );
    } catch (error) {
      // A room's resend of an action held or submitted (or since narrated): the decider
      // refuses it as taken; where it is now is the answer.
      const resent = await this.roomResend(adventureId, command, error);
      if (resent) return resent;
      throw error;
    }
    if (handled.original) return accepted(adventureId, handled.original);
    const room = roomAnswer(adventureId, handled.events, handled.state);
    if (room) return room;
    if (handled.duplicate && command.type === 'SubmitAction') {
      const resent = await this.roomResend(adventureId, command, null);
      if (resent) return resent;
    }
    const started = handled.events[0];
    if (started?.type === 'PlayerActed') await this.announce(turnId, started);
    await this.announceScripts(turnId, handled.events, handled.state.scripts);
    const action = started?.type === 'PlayerActed' ? started.data.action : null;
    return {
      turnId,
      actionId: action?.id ?? null,
      version: started?.version ?? handled.state.version,
      stream: turnStreamPath(adventureId, turnId),
    };
  }

  /**
   * A room member's resend of an action the log holds already (held, submitted, or a story node
   * since): answered with where it is, never applied twice (its events' ids derive from the
   * action id). Null when the action is not there: the refusal stands.
   */
  private async roomResend(
    adventureId: string,
    command: TurnStartCommand,
    error: unknown,
  ): Promise<TurnAccepted | null> {
    if (command.type !== 'SubmitAction' || command.data.actorId === undefined) return null;
    if (error !== null && !(error instanceof ConflictError)) return null;
    const state = await this.adventures.get(adventureId);
    if (!isRoomAdventure(state)) return null;
    const actionId = command.data.actionId;
    const place = roomActionPlace(state, actionId);
    const waiting = { actionId, version: state.version, stream: roomStreamPath(adventureId) };
    if (place?.place === 'submitted') {
      const turnId = state.turns.round.turnId ?? command.data.turnId;
      return { ...waiting, turnId, roundId: place.roundId, submitted: true };
    }
    if (place?.place === 'held') return { ...waiting, turnId: place.turnId, held: true };
    const turnId = nodeOf(state, actionId)?.turnId;
    if (!turnId) return null;
    return { ...waiting, turnId, stream: turnStreamPath(adventureId, turnId) };
  }

  /**
   * A script's messages (`message {text}`), a notice for each failed run (`notice {text}`), and
   * `stopped {message}` when it ended the turn.
   */
  private async announceScripts(
    turnId: string,
    events: readonly { type: string; data: unknown }[],
    scripts: AdventureState['scripts'],
  ): Promise<void> {
    const frames: TurnFrame[] = scriptStreamFrames(events, scripts);
    const stopped = events.find((e) => e.type === 'TurnStoppedByScript');
    if (stopped) {
      frames.push({
        event: 'stopped',
        data: { message: (stopped.data as { message: string }).message },
      });
    }
    if (frames.length === 0) return;
    try {
      await this.stream.publishMany(turnId, frames);
    } catch (error) {
      // The log has the outcome: a follower that misses the frame gets `stopped` from it.
      this.logger.warn({
        msg: 'could not publish script frames',
        turnId,
        error: (error as Error).message,
      });
    }
  }

  /** The first frame of the turn's stream: the player's action as the story will show it. */
  private async announce(turnId: string, event: PlayerActed): Promise<void> {
    const action = event.data.action;
    try {
      await this.stream.publish(turnId, 'player', {
        action: action ? { id: action.id, type: action.type, text: action.text } : null,
      });
    } catch (error) {
      // The turn is accepted and queued; a client that misses `player` still gets the rest.
      this.logger.warn({
        msg: "could not publish the turn's player frame",
        turnId,
        error: (error as Error).message,
      });
    }
  }
}

/**
 * A room's answer by what the action did. Held for the next turn (`free`) or submitted to a
 * round that still waits: `turnId` is the turn that will answer it, and `stream` the room's,
 * whose frames say when that turn starts (its own stream has nothing before). A submission that
 * closed its round: the round's turn and its stream.
 */
function roomAnswer(
  adventureId: string,
  events: readonly RecordedAdventureEvent[],
  state: AdventureState,
): TurnAccepted | null {
  const [first] = events;
  if (first?.type === 'ActionHeld') {
    const { turnId, action } = first.data;
    const stream = roomStreamPath(adventureId);
    return { turnId, actionId: action.id, version: first.version, stream, held: true };
  }
  if (first?.type !== 'ActionSubmitted') return null;
  const { roundId, action } = first.data;
  const closed = events.find((event) => event.type === 'PlayersActed');
  if (closed?.type !== 'PlayersActed') {
    return {
      turnId: state.turns.round.turnId ?? first.data.turnId,
      actionId: action.id,
      version: first.version,
      stream: roomStreamPath(adventureId),
      roundId,
      submitted: true,
    };
  }
  const turnId = closed.data.turnId;
  return {
    turnId,
    actionId: action.id,
    version: closed.version,
    stream: turnStreamPath(adventureId, turnId),
    roundId,
    submitted: true,
    closed: true,
  };
}

/** The answer to a resend: the turn its original event started, where that event sits. */
function accepted(adventureId: string, original: RecordedAdventureEvent): TurnAccepted {
  const turnId = (original.data as { turnId: string }).turnId;
  return {
    turnId,
    actionId: original.type === 'PlayerActed' ? (original.data.action?.id ?? null) : null,
    version: original.version,
    stream: turnStreamPath(adventureId, turnId),
  };
}
