import { randomUUID } from 'node:crypto';
import { Inject, Injectable, Logger } from '@nestjs/common';
import {
  formatPlayerInput,
  type ScriptedInput,
  type PlayerActionType,
  isDomainError,
  nodeOf,
  scriptStreamFrames,
  turnStatus,
  UnprocessableError,
  type AdventureCommand,
  type AdventureState,
  type InputType,
  type PlayerActed,
  type PlayerActedData,
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
import { AdventureIndexRepository } from './adventure-index.repository';
import { turnStreamPath } from './adventure.reader';
import { requestFingerprint, turnIdFor } from './turn-id';

/** The answer to an accepted turn (202): where to watch it. */
export interface TurnAccepted {
  turnId: string;
  /** The player action written; null for continue and retry. */
  actionId: string | null;
  /** The stream version right after the event that started the turn. */
  version: number;
  stream: string;
}

const PLAYER_ACTIONS: ReadonlySet<string> = new Set(['do', 'say', 'story']);

/** The request an idempotency key stands for, as its fingerprint covers it. */
type TurnRequest = { kind: 'act'; type: InputType; text: string } | { kind: 'retry' };

/** The projection shows that this client id already started a turn here. */
function isResend(state: AdventureState, clientId: string, turnId: string): boolean {
  const node = nodeOf(state, clientId);
  if (node) return PLAYER_ACTIONS.has(node.type) && node.turnId !== null;
  return turnStatus(state, turnId) !== null;
}

/** The decider's refusals, which a racing copy of the same request can cause. */
function isRefusal(error: unknown): boolean {
  return (
    isDomainError(error) &&
    (error.kind === 'conflict' || error.kind === 'invalid' || error.kind === 'not_found')
  );
}

/**
 * Starts turns: a player action (or continue) and a retry. The client's id is the idempotency
 * key: it is the id of the event that starts the turn, and the turn id is derived from it in
 * the adventure's namespace (turn-id.ts). A resend with the same body finds the original in the
 * log and gets the same answer — never a second turn, never a 409 — even when two copies race;
 * a resend with another body is a 422 naming the conflict.
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
    private readonly index: AdventureIndexRepository,
    private readonly stream: TurnStreamPublisher,
    private readonly sandbox: ScriptSandboxPool,
    @Inject(SCRIPT_RUN_LIMITS) private readonly scriptLimits: ScriptRunLimits,
  ) {}

  async act(
    adventureId: string,
    input: { type: InputType; text?: string; id?: string },
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
    const scripted =
      input.type === 'continue' || remembered
        ? { script: remembered }
        : await this.runInputScripts(adventureId, clientId, turnId, input.type, input.text ?? '');
    const script = scripted.script;
    if (script && resultKey !== null) this.inputResults.set(resultKey, script);
    const accepted = await this.start(adventureId, eventId, clientId, fingerprint, scripted.state, {
      type: 'SubmitAction',
      data: {
        turnId,
        inputType: input.type,
        text: input.text ?? '',
        actionId: eventId,
        ...(script ? { script } : {}),
      },
    });
    // In the log now: a resend finds the turn there and runs nothing.
    if (resultKey !== null) this.inputResults.delete(resultKey);
    return accepted;
  }

  /**
   * onInput, before PlayerActed (docs/scripting.md §3.1): the adventure's enabled scripts on the formatted
   * input, after the resend check (a known action id runs nothing). No script when there is
   * nothing to run; the decider then writes the typed text as before. With no script run, the
   * projection it read is handed on (`state`): the decision reads it too, so a turn costs one
   * load (the append at its version proves it current). After a script run, which takes time,
   * the decision loads again.
   */
  private async runInputScripts(
    adventureId: string,
    clientId: string | undefined,
    turnId: string,
    type: PlayerActionType,
    typed: string,
  ): Promise<{ script?: ScriptedInput; state?: AdventureState }> {
    const state = await this.adventures.get(adventureId);
    const none = { state };
    if (state.id === null) return none;
    if (!state.scripts.some((s) => s.enabled && s.input.trim() !== '')) return none;
    if (clientId !== undefined && isResend(state, clientId, turnId)) return none;
    if (turnStatus(state, turnId) !== null || state.inFlight) return none;
    let text: string | null;
    try {
      text = formatPlayerInput(type, typed);
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
        info: { actionCount: base.actionCount, characterNames: base.characterNames },
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
    return this.start(adventureId, eventId, clientId, fingerprint, undefined, {
      type: 'RequestRetry',
      data: { turnId },
    });
  }

  /**
   * One load (`loaded`, when the caller read it just now): the resend check and the decision
   * read the same projection. A resend the projection cannot show (a turn older than it
   * remembers) is caught by the event id instead: the append finds it stored and answers with
   * the original.
   */
  private async start(
    adventureId: string,
    eventId: string,
    clientId: string | undefined,
    fingerprint: string,
    loaded: AdventureState | undefined,
    command: AdventureCommand & { data: { turnId: string } },
  ): Promise<TurnAccepted> {
    const turnId = command.data.turnId;
    currentLogContext().turnId = turnId;
    try {
      const state = loaded ?? (await this.adventures.get(adventureId));
      if (clientId !== undefined && isResend(state, clientId, turnId)) {
        const original = await this.originalTurn(adventureId, clientId, fingerprint);
        if (original) return original;
      }
      // Decided on the state just read: the append at its version proves it current. The
      // narrate job follows from the event (see `jobsAfter`).
      const handled = await this.adventures.handle(
        adventureId,
        { ...command, key: eventId },
        // requestedAt goes with the narrate job: POST → model request is measured from it.
        { ...requestMetadata(), requestFingerprint: fingerprint, requestedAt: requestReceivedAt() },
        { state },
      );
      if (handled.duplicate && clientId !== undefined) {
        const original = await this.originalTurn(adventureId, clientId, fingerprint);
        if (original) return original;
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
    } catch (error) {
      // A copy of this request won the race (its turn is now in flight, or its action exists),
      // or the id names a turn too old for the projection to show, which the decider refused
      // before the append could recognise it: answer with that turn.
      if (clientId !== undefined && isRefusal(error)) {
        const original = await this.originalTurn(adventureId, clientId, fingerprint);
        if (original) return original;
      }
      throw error;
    }
  }

  /**
   * The turn a client id already started, read from the event it named; null when the id names
   * no turn-starting event here (it is new, or names a narration: the decider refuses that).
   * The same key with another body is refused (422): a key promises one request.
   */
  private async originalTurn(
    adventureId: string,
    clientId: string,
    fingerprint: string,
  ): Promise<TurnAccepted | null> {
    const stored = await this.index.eventById(adventureId, clientId);
    if (!stored || (stored.type !== 'PlayerActed' && stored.type !== 'RetryRequested')) {
      return null;
    }
    const original = (stored.metadata as { requestFingerprint?: unknown } | null)
      ?.requestFingerprint;
    // Events written before fingerprints were recorded answer as before: the original turn.
    if (typeof original === 'string' && original !== fingerprint) {
      throw new UnprocessableError(
        `id ${clientId} was already used for a different request (${describeStored(stored.type, stored.data)}); resend the same body with that id, or send a new id`,
      );
    }
    const data = stored.data as { turnId: string; action?: PlayerActedData['action'] };
    return {
      turnId: data.turnId,
      actionId: data.action?.id ?? null,
      version: stored.version,
      stream: turnStreamPath(adventureId, data.turnId),
    };
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

function describeStored(type: string, data: unknown): string {
  if (type === 'RetryRequested') return 'a retry';
  const inputType = (data as { inputType?: string }).inputType ?? 'an action';
  return inputType === 'continue' ? 'a continue' : `a "${inputType}" action with other text`;
}
