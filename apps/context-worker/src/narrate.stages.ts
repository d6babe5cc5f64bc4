// The stages of a narration, in their order, each taking the draft the one before made and
// adding what it found: prompt (memories, context) → onModelContext → the model's reply →
// onOutput → the narration to record. The reply goes in whole: the decider parses its state
// block and referees it on the state the narration is appended to (RecordNarration).
// NarrateTurnUseCase runs the stages; what to do when one fails is the turn workflow's
// (libs/adventure/src/turn.workflow.ts).
import { Inject, Injectable, Logger } from '@nestjs/common';
import { DailyTokenBudget } from '@chronicle/accounts';
import {
  type AdventureState,
  type Keyed,
  type RecordNarration,
  type ScriptEffects,
} from '@chronicle/adventure';
import {
  AdventureCommandHandler,
  buildTurnContext,
  contextManifest,
  deterministicEventId,
  type ScriptHookBase,
} from '@chronicle/adventure-store';
import type { BuiltContext } from '@chronicle/context';
import type { ModelClient } from '@chronicle/llm';
import { MemoryRetrievalService, type RetrievalResult } from '@chronicle/memory-store';
import { parseReply } from '@chronicle/narrative';
import type { AppConfig } from '@chronicle/platform';
import { inSpan } from '@chronicle/telemetry';
import { TurnStreamPublisher } from '@chronicle/turn-stream';
import type { FinishedNarration } from './finished-narration.store';
import { MODEL_CLIENT, NarratorLabel } from './model-client.provider';
import { streamReply, type Fence, type StreamedReply } from './reply.stream';
import { ACTOR, type TurnAttempt } from './turn.recorder';
import { TurnScripts, type ContextScripts } from './turn-scripts';
import { WORKER_CONFIG } from './worker-config.token';

/** The turn as the stages leave it: each field is filled by the stage named beside it. */
export interface NarrationDraft {
  input: TurnAttempt;
  state: AdventureState;
  signal: AbortSignal;
  fence: Fence;
  /** prompt: the memories the prompt used (null: the memory bank is off). */
  memories: RetrievalResult | null;
  /** prompt: the scripts' hook base; null when the adventure has none. */
  scriptBase: ScriptHookBase | null;
  /** contextHooks: what onModelContext did (null: no Context hook). */
  contextScripts: ContextScripts | null;
  /** prompt, then contextHooks: the prompt sent to the model. */
  built: BuiltContext;
  /** reply: the model's whole reply, streamed. */
  streamed: StreamedReply;
  /** reply: the reply's prose, its state blocks left out (what onOutput reads and the stream shows). */
  prose: string;
  /** outputHooks: the text recorded and what onOutput did (null: no Output hook). */
  narrationText: string;
  outputEffects: ScriptEffects | null;
}

/** The draft with the fields up to a stage filled. */
export type DraftAt<K extends keyof NarrationDraft> = Pick<
  NarrationDraft,
  'input' | 'state' | 'signal' | 'fence' | K
>;

type Prompted = DraftAt<'memories' | 'scriptBase' | 'built'>;
type Contexted = DraftAt<keyof Prompted | 'contextScripts'>;
type Replied = DraftAt<keyof Contexted | 'streamed' | 'prose'>;
export type NarratedDraft = NarrationDraft;

@Injectable()
export class NarrateStages {
  private readonly logger = new Logger('NarrateTurn');

  constructor(
    private readonly adventures: AdventureCommandHandler,
    private readonly stream: TurnStreamPublisher,
    private readonly memories: MemoryRetrievalService,
    @Inject(MODEL_CLIENT) private readonly model: ModelClient,
    private readonly label: NarratorLabel,
    @Inject(WORKER_CONFIG) private readonly config: AppConfig,
    private readonly budget: DailyTokenBudget,
    private readonly scripts: TurnScripts,
  ) {}

  /**
   * Whether the owner's daily token budget is spent, asked before the model is called: the
   * API's check at the POST may be stale by the time the job runs (the owner's turns on other
   * adventures, memory passes). A narration once started is never cut short for money.
   */
  async budgetSpent(state: AdventureState): Promise<string | null> {
    if (this.label.narrator === 'offline' || !state.ownerId) return null;
    const spent = await this.budget.spentForOwner(
      state.ownerId,
      this.config.dailyTokenBudget,
      new Date(),
    );
    return spent?.message ?? null;
  }

  /**
   * Claims the stream's fence and builds the prompt, side by side. The claim writes `reset`
   * (whatever an earlier attempt streamed is void) before any chunk of this attempt when there
   * was an earlier one or the stream holds output (Redis's to say, in one script).
   */
  async prompt(draft: DraftAt<never>): Promise<Prompted> {
    const { state, input } = draft;
    const resetting = this.stream.claim(input.turnId, input.fence, input.attempt > 1);
    const prompting = inSpan('prompt build', {}, async (span) => {
      const memories = await this.memories.retrieve(state);
      const built = await buildTurnContext(this.adventures, state, {
        defaultModel: this.config.modelName,
        memories,
        passages: memories?.passages ?? null,
      });
      span.set({
        'chronicle.prompt.tokens': built.report.tokens.total,
        'chronicle.prompt.budget': built.report.tokens.budget,
        'chronicle.memories': memories?.used.length ?? 0,
      });
      return { memories, built };
    });
    const [, { memories, built }] = await Promise.all([resetting, prompting]);
    const scriptBase = await this.scripts.base(state);
    return { ...draft, memories, built, scriptBase };
  }

  /**
   * onModelContext on the built prompt, before the model call: a script may change the prompt
   * or stop the turn before it costs a model call (`contextScripts.stopped`).
   */
  async contextHooks(draft: Prompted): Promise<Contexted> {
    const { scriptBase } = draft;
    if (!scriptBase?.scripts.some((s) => s.context.trim() !== '')) {
      return { ...draft, contextScripts: null };
    }
    const contextScripts = await this.scripts.context(draft.state, scriptBase, draft.built);
    return { ...draft, contextScripts, built: contextScripts.built };
  }

  /**
   * The model's reply, relayed to the turn's stream as it arrives (see reply.stream.ts), and its
   * prose: the parser's split (libs/narrative's parseReply), the one the decider makes too.
   */
  async reply(draft: Contexted): Promise<Replied> {
    const { input, state, signal, fence } = draft;
    // Named and noted as OpenTelemetry's conventions for generative AI name a model call.
    const requested = { 'gen_ai.request.model': draft.built.report.settings.model };
    const streamed = await inSpan('model call', requested, async (span) => {
      const answer = await streamReply(
        { model: this.model, stream: this.stream, logger: this.logger },
        state.settings,
        draft.built,
        { adventureId: input.adventureId, turnId: input.turnId, token: input.fence },
        signal,
        fence,
      );
      const { usage, model, finishReason } = answer.done;
      span.set({
        'gen_ai.response.model': model,
        'gen_ai.response.finish_reasons': [finishReason],
        'gen_ai.usage.input_tokens': usage.promptTokens,
        'gen_ai.usage.output_tokens': usage.completionTokens,
        'chronicle.usage.cached_tokens': usage.cachedTokens,
        'chronicle.narrator': this.label.narrator,
      });
      return answer;
    });
    return { ...draft, streamed, prose: parseReply(streamed.reply).narration };
  }

  /**
   * onOutput on the prose only: the state block goes to the decider in the raw reply, and what
   * is stored and shown is the script's text (raw_output keeps the model's bytes in the
   * stream). An empty generation reaches it too, with `info.emptyOutputReason`: a script may
   * fill it.
   */
  async outputHooks(draft: Replied): Promise<NarratedDraft> {
    const base = draft.contextScripts?.after ?? draft.scriptBase;
    const { prose } = draft;
    if (!base?.scripts.some((s) => s.output.trim() !== '')) {
      return { ...draft, narrationText: prose, outputEffects: null };
    }
    const { done } = draft.streamed;
    const { text, effects } = await this.scripts.output(
      draft.state,
      base,
      prose,
      // The turn's script time so far; null when no Context hook ran (then onInput's is read).
      draft.contextScripts?.spentMs ?? null,
      { contextTokens: done.usage.promptTokens, finishReason: done.finishReason },
    );
    return { ...draft, narrationText: text, outputEffects: effects };
  }

  /** The narration to record: the command, its metadata, and what the stream and log need. */
  finished(draft: NarratedDraft): FinishedNarration {
    const { input, state, streamed, memories, contextScripts, outputEffects } = draft;
    const { turnId } = input;
    const { done, latencyMs } = streamed;
    // The memories the prompt used are counted with the narration, and the query's embedding is
    // paid for with it (see RecordNarration); the memory pass that follows is `jobsAfter`'s.
    const retrievalUsage =
      memories?.usage && memories.usage.promptTokens + memories.usage.completionTokens > 0
        ? memories.usage
        : null;
    const command: Keyed<RecordNarration> = {
      type: 'RecordNarration',
      key: deterministicEventId(turnId, 'narrated'),
      data: {
        turnId,
        actionId: deterministicEventId(turnId, 'narration-action'),
        text: draft.narrationText,
        reply: streamed.reply,
        reasoning: streamed.reasoning || null,
        usage: {
          ...done.usage,
          model: done.model,
          // A Context rewrite gave up the prefix cache: what it cost, beside what was served.
          ...(contextScripts?.cacheLossTokens
            ? { scriptCacheLossTokens: contextScripts.cacheLossTokens }
            : {}),
        },
        model: done.model,
        narrator: this.label.narrator,
        finishReason: done.finishReason,
        contextManifest: contextManifest(draft.built),
        latencyMs,
        // The memories the prompt held (within their share of the budget), as its report says.
        memoriesUsed: draft.built.report.memories?.used.map((memory) => memory.id) ?? [],
        retrievalUsage,
        // The scripts' effects commit once, with Narrated: a redelivered job that reran the
        // hooks finds Narrated stored and appends none of its own.
        ...(contextScripts || outputEffects
          ? {
              scripts: {
                ...(contextScripts ? { context: contextScripts.effects } : {}),
                ...(outputEffects ? { output: outputEffects } : {}),
              },
            }
          : {}),
      },
    };
    return {
      turnId,
      version: state.version,
      producedBy: input.fence,
      command,
      meta: {
        actor: ACTOR,
        causationId: turnId,
        model: done.model,
        narrator: this.label.narrator,
        usage: done.usage,
        latencyMs,
      },
      prose: draft.prose,
      usages: [{ ...done.usage, model: done.model }, ...(retrievalUsage ? [retrievalUsage] : [])],
      summary: {
        narrator: this.label.narrator,
        model: done.model,
        latencyMs,
        usage: done.usage,
        finishReason: done.finishReason,
      },
    };
  }
}
