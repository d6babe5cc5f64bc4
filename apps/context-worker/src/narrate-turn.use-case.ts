import { Inject, Injectable, Logger } from '@nestjs/common';
import {
  decideTurnStep,
  ONLY_BLOCK_MESSAGE,
  outputScriptChangedText,
  type TurnFact,
  type TurnRun,
  type TurnStep,
} from '@chronicle/adventure';
import { AdventureCommandHandler } from '@chronicle/adventure-store';
import { isModelError, ModelError } from '@chronicle/llm';
import { ControlPlane, describeError, type AppConfig } from '@chronicle/platform';
import { FinishedNarrationStore } from './finished-narration.store';
import { NarrateStages, type NarratedDraft } from './narrate.stages';
import { Fence } from './reply.stream';
import { factOfError } from './turn.facts';
import {
  TurnDeferredError,
  TurnRecorder,
  type NarrateOutcome,
  type TurnAttempt,
  type TurnFailure,
} from './turn.recorder';
import { WORKER_CONFIG } from './worker-config.token';

export { TurnDeferredError, type NarrateOutcome } from './turn.recorder';

export interface NarrateTurnInput extends TurnAttempt {
  /** The attempts this job has; the last one records NarrationFailed instead of retrying. */
  maxAttempts: number;
}

/**
 * The worker's half of a turn (see docs/ARCHITECTURE.md): one narrate job, from the projection to
 * the Narrated event, as a pipeline of named stages (narrate.stages.ts) over one draft. What
 * happened goes to the turn workflow as a fact, and this class does the steps it answers: the
 * rules of retrying, waiting and failing are the workflow's alone.
 */
@Injectable()
export class NarrateTurnUseCase {
  private readonly logger = new Logger('NarrateTurn');

  constructor(
    private readonly adventures: AdventureCommandHandler,
    private readonly controlPlane: ControlPlane,
    @Inject(WORKER_CONFIG) private readonly config: AppConfig,
    private readonly stages: NarrateStages,
    private readonly recorder: TurnRecorder,
    private readonly finished: FinishedNarrationStore,
  ) {}

  async execute(input: NarrateTurnInput): Promise<NarrateOutcome> {
    // Registered before anything is read, so a cancel that arrives while the projection loads
    // still reaches the model call.
    const turn = this.controlPlane.registerTurn(input.turnId);
    const fence = new Fence();
    try {
      const state = await this.adventures.load(input.adventureId);
      const inFlight = state?.inFlight?.turnId === input.turnId;
      const started = await this.follow(input, { type: 'JobStarted', inFlight }, turn.signal);
      if (started || !state) return started ?? { status: 'skipped', reason: 'not-in-flight' };
      const draft = { input, state, signal: turn.signal, fence };

      // A narration this turn finished before an outage kept it from the log: recorded as it is.
      const kept = await this.finished.find(input.turnId, state.version);
      if (kept) return await this.recorder.recordKept(state, input, kept, fence);
      const overBudget = await this.stages.budgetSpent(state);
      if (overBudget) {
        this.logger.warn({
          msg: 'the owner is over the daily token budget; turn not narrated',
          detail: overBudget,
        });
        const failed = await this.follow(input, { type: 'BudgetSpent' }, turn.signal);
        if (failed) return failed;
      }
      const contexted = await this.stages.contextHooks(await this.stages.prompt(draft));
      if (contexted.contextScripts?.stopped) {
        return await this.recorder.stoppedByScript(input, contexted.contextScripts, fence);
      }
      const narrated = await this.stages.outputHooks(await this.stages.reply(contexted));
      this.requireProse(input, narrated);
      return await this.recorder.record(state, input, this.stages.finished(narrated), fence);
    } catch (error) {
      return await this.onError(error, input, turn.signal, fence);
    } finally {
      turn.release();
    }
  }

  /** Also called when BullMQ gives up on a job by itself and by the reconciler. */
  recordFailure(
    adventureId: string,
    turnId: string,
    failure: TurnFailure,
    attempts: number,
  ): Promise<boolean> {
    return this.recorder.recordFailure(adventureId, turnId, failure, attempts);
  }

  /**
   * A reply with no prose is a failed attempt, unless an Output hook chose the blank text: thrown
   * as the model error it is, so the failure path (fence, attempts left) decides as for any other.
   */
  private requireProse(input: NarrateTurnInput, draft: NarratedDraft): void {
    const blank =
      draft.narrationText.trim() === '' &&
      !outputScriptChangedText(draft.outputEffects ?? undefined);
    const [step] = decideTurnStep(this.run(input), { type: 'ModelReplied', blank });
    if (step.type !== 'RecordNarration') throw blankReplyError();
  }

  private async onError(
    error: unknown,
    input: NarrateTurnInput,
    signal: AbortSignal,
    fence: Fence,
  ): Promise<NarrateOutcome> {
    const fact = factOfError(error, signal, fence);
    this.logFailure(fact, error);
    const outcome = await this.follow(input, fact, signal);
    // A retry that counts an attempt is the queue's: the error goes back to it as it came (its
    // Retry-After, if any, sets the backoff; see narrateBackoff).
    if (!outcome) throw error;
    return outcome;
  }

  /**
   * Does the workflow's steps for `fact`: an outcome when the job ends here, null when the turn
   * goes on (Narrate, RecordNarration) or the queue retries it counting an attempt.
   */
  private async follow(
    input: NarrateTurnInput,
    fact: TurnFact,
    signal: AbortSignal,
  ): Promise<NarrateOutcome | null> {
    for (const step of decideTurnStep(this.run(input), fact)) {
      const outcome = await this.doStep(input, step, signal);
      if (outcome) return outcome;
    }
    return null;
  }

  private async doStep(
    input: NarrateTurnInput,
    step: TurnStep,
    signal: AbortSignal,
  ): Promise<NarrateOutcome | null> {
    switch (step.type) {
      case 'Ignore':
        this.logger.log({ msg: 'nothing to do for this turn', reason: step.reason });
        return { status: 'skipped', reason: step.reason };
      case 'RecordFailure':
        await this.recorder.recordFailureUntilRecorded(input, step, signal);
        return { status: 'failed', code: step.code, error: step.message };
      case 'Retry':
        if (step.countsAttempt) return null;
        // Back to the queue (at once, or after the wait) without spending an attempt.
        throw new TurnDeferredError(input.turnId, step.afterMs ?? 0, step.reason);
      default:
        return null;
    }
  }

  private run(input: NarrateTurnInput): TurnRun {
    return {
      attempt: input.attempt,
      maxAttempts: input.maxAttempts,
      deadlineMs: this.config.narrateTurnDeadlineMs,
      maxRequeues: this.config.reconcileMaxRequeues,
    };
  }

  /** The operator's words (the endpoint, the provider's own) go to the log, never the player's. */
  private logFailure(fact: TurnFact, error: unknown): void {
    const described = describeError(error);
    switch (fact.type) {
      case 'Cancelled':
        return this.logger.log({ msg: 'turn was cancelled or finished elsewhere; stopping' });
      case 'FencedOut':
        return this.logger.warn({
          msg: 'a fenced-out attempt failed; the turn is left to the one that claimed it',
          error: described,
        });
      case 'DependencyDown':
        return this.logger.warn({
          msg: 'a dependency is unreachable; the turn waits',
          error: described,
        });
      case 'StepFailed':
        return this.logger.error({
          msg: 'narration attempt failed unexpectedly',
          error: described,
        });
      case 'ModelFailed':
        return this.logger.warn({
          msg: 'narration attempt failed',
          error: described,
          ...(isModelError(error) && { kind: error.kind, retryAfterMs: error.retryAfterMs }),
        });
      default:
        return undefined;
    }
  }
}

/** The model replied, but with nothing a player can read: worth another attempt. */
function blankReplyError(): ModelError {
  const message = ONLY_BLOCK_MESSAGE;
  return new ModelError({
    kind: 'bad_request',
    retryable: true,
    message,
    playerMessage: message,
  });
}
