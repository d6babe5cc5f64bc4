import { randomUUID } from 'node:crypto';
import { Inject, Injectable } from '@nestjs/common';
import { storableText, type AdventureState, type ScriptEffects } from '@chronicle/adventure';
import {
  AdventureCommandHandler,
  scriptHookBase,
  type ScriptHookBase,
} from '@chronicle/adventure-store';
import { cacheableTokens, SEPARATOR, type BuiltContext } from '@chronicle/context';
import { EMIT_REMINDER } from '@chronicle/narrative';
import {
  SCRIPT_RUN_LIMITS,
  ScriptSandboxPool,
  type ScriptRunLimits,
} from '@chronicle/script-sandbox';
import {
  SCRIPT_LIMITS,
  classifyContextResult,
  fitRewrite,
  isCacheCompatible,
  renderContextView,
  runHookChain,
  scriptLimitsFor,
  turnBudgetLeft,
  type ContextChange,
  type HookChainResult,
  type HookInfo,
} from '@chronicle/scripting';

export interface ContextScripts {
  built: BuiltContext;
  change: ContextChange;
  stopped: { message: string; scriptId: string } | null;
  effects: ScriptEffects;
  /** For the output hook: the state after this hook (cards and script states). */
  after: ScriptHookBase;
  spentMs: number;
  /**
   * A rewrite gave up the provider's prompt cache: what the native prompt would have had served
   * from it, less what the unchanged system block keeps (reported in the turn's usage).
   */
  cacheLossTokens: number;
}

/** The report's sections that make the system block (context.builder's addSystem labels). */
const SYSTEM_SECTIONS = new Set([
  'narrator',
  'state_rule',
  'campaign_canon',
  'script_context',
  'ai_instructions',
  'persona',
  'players',
  'plot_essentials',
]);

function sectionText(built: BuiltContext, label: string): string {
  return built.report.sections.find((s) => s.label === label)?.text ?? '';
}

function stripHeading(text: string, heading: string): string {
  return text.startsWith(heading) ? text.slice(heading.length) : text;
}

function effectsOf(
  chain: HookChainResult,
  contextChange?: ContextChange,
  notice?: string,
): ScriptEffects {
  return {
    runs: chain.runs.map((run) => ({
      scriptId: run.scriptId,
      hook: run.hook,
      outcome: run.outcome,
      textChanged: run.textChanged,
      ...(contextChange && run.outcome === 'ok' ? { contextChange } : {}),
      ms: Math.round(run.ms * 100) / 100,
      cpuMs: Math.round(run.cpuMs * 100) / 100,
      // Why an append-only adventure did not use what the chain made of the context.
      logs: notice && run.outcome === 'ok' ? [...run.logs, `[chronicle] ${notice}`] : run.logs,
      ...(run.error ? { error: run.error } : {}),
    })),
    states: chain.states,
    cardOps: chain.cardOps,
    messages: chain.messages,
  };
}

/**
 * What a Context rewrite costs the provider's prefix cache: the native prompt's cacheable prefix
 * less the system block's, which the rewrite leaves byte-identical.
 */
export function rewriteCacheLoss(native: BuiltContext): number {
  const systemTokens = native.report.sections
    .filter((s) => SYSTEM_SECTIONS.has(s.label))
    .reduce((sum, s) => sum + s.tokens, 0);
  return Math.max(0, native.report.cache.expectedCachedTokens - cacheableTokens(systemTokens));
}

/**
 * `info.emptyOutputReason` when the model's reply had no prose (spec §1.3): `length` (the
 * output cap was reached first), `content_filter` (the provider withheld it), else `empty`.
 */
export function emptyOutputReason(finishReason: string): string {
  if (finishReason === 'length' || finishReason === 'content_filter') return finishReason;
  return 'empty';
}

/** The script state a later hook of the same turn starts from. */
function advanced(base: ScriptHookBase, chain: HookChainResult): ScriptHookBase {
  return { ...base, states: { ...base.states, ...chain.states }, cards: chain.cards };
}

/**
 * onModelContext and onOutput for one narrate job (docs/scripting.md §3.1–3.2): the Context hook
 * on an AI Dungeon-shaped view of the prompt, its result applied as unchanged, an appended
 * section or a rewrite of the story block; the Output hook on the prose after the referee.
 * Nothing is appended here: the effects travel to the turn's terminal event.
 */
@Injectable()
export class TurnScripts {
  constructor(
    private readonly adventures: AdventureCommandHandler,
    private readonly sandbox: ScriptSandboxPool,
    @Inject(SCRIPT_RUN_LIMITS) private readonly limits: ScriptRunLimits,
  ) {}

  /** The hook inputs at the head, or null when the adventure runs no scripts. */
  base(state: AdventureState): Promise<ScriptHookBase | null> {
    return scriptHookBase(this.adventures, state);
  }

  async context(
    state: AdventureState,
    base: ScriptHookBase,
    built: BuiltContext,
  ): Promise<ContextScripts> {
    const scriptContext = sectionText(built, 'script_context');
    const view = renderContextView({
      plotEssentials: scriptContext || state.fields.plotEssentials,
      lore: sectionText(built, 'world_lore')
        .split('\n')
        .filter((line) => line.startsWith('World Lore: '))
        .map((line) => line.slice('World Lore: '.length)),
      summary: stripHeading(sectionText(built, 'story_summary'), 'Story summary:\n'),
      memories: stripHeading(sectionText(built, 'used_memories'), 'Memories:\n')
        .split('\n')
        .filter(Boolean),
      history: base.history
        .slice(-Math.max(1, built.report.history.included))
        .map((entry) => entry.text),
      authorsNote: sectionText(built, 'authors_note').replace(/^\[Author's note: |\]$/g, ''),
      frontMemory: sectionText(built, 'front_memory'),
    });
    const storyTokens = built.report.sections
      .filter((s) => !SYSTEM_SECTIONS.has(s.label))
      .reduce((sum, s) => sum + s.tokens, 0);
    const charsPerToken = storyTokens > 0 ? built.story.length / storyTokens : 4;
    const maxChars = Math.floor(built.report.tokens.budget * charsPerToken);
    const chain = await this.run(
      state,
      base,
      'context',
      view.text,
      { maxChars, memoryLength: view.memoryLength, contextTokens: built.report.tokens.total },
      this.spentBeforeWorker(state),
    );
    const after = advanced(base, chain);
    if (chain.stopped) {
      const scriptId = [...chain.runs].reverse().find((r) => r.outcome === 'stopped')?.scriptId;
      return {
        built,
        change: 'unchanged',
        stopped: { message: chain.stopMessage ?? '', scriptId: scriptId ?? '' },
        effects: effectsOf(chain),
        after,
        spentMs: this.spentBeforeWorker(state) + chain.spentMs,
        cacheLossTokens: 0,
      };
    }
    const cacheCompatible = base.scripts.every(
      (s) => !s.enabled || s.context.trim() === '' || isCacheCompatible(s.context),
    );
    const result = classifyContextResult(view, chain.text, {
      mode: state.settings.contextHookMode,
      cacheCompatible,
    });
    let story = built.story;
    const reminderAt = story.endsWith(EMIT_REMINDER) ? story.length - EMIT_REMINDER.length : -1;
    if (result.change === 'append' && result.suffix.trim() !== '' && reminderAt >= 0) {
      // A section just above the state reminder: the cached prefix survives.
      story = `${story.slice(0, reminderAt)}${result.suffix.trim()}${SEPARATOR}${EMIT_REMINDER}`;
    } else if (result.change === 'rewrite' && reminderAt >= 0) {
      // The story block is the script's text, cut from the front to the budget (AID's maxChars).
      story = `${fitRewrite(result.story, maxChars)}${SEPARATOR}${EMIT_REMINDER}`;
    }
    const change: ContextChange =
      result.change === 'discarded' || story !== built.story ? result.change : 'unchanged';
    // A rewritten story has no depth messages where the built one had them; an append keeps
    // every offset before it.
    const { storyRoles, ...rest } = built;
    return {
      built: {
        ...rest,
        ...(storyRoles && change !== 'rewrite' && { storyRoles }),
        story,
        report: { ...built.report, prompt: { ...built.report.prompt, story } },
      },
      change,
      stopped: null,
      effects: effectsOf(chain, change, result.change === 'discarded' ? result.reason : undefined),
      after,
      spentMs: this.spentBeforeWorker(state) + chain.spentMs,
      cacheLossTokens: change === 'rewrite' ? rewriteCacheLoss(built) : 0,
    };
  }

  /** onOutput on the prose: the narration as stored and shown (the referee read the raw reply). */
  async output(
    state: AdventureState,
    base: ScriptHookBase,
    prose: string,
    /** The turn's script time so far; null when no Context hook ran (then onInput's is read). */
    spentMs: number | null,
    reply: { contextTokens: number; finishReason: string },
  ): Promise<{ text: string; effects: ScriptEffects }> {
    const info: Partial<HookInfo> = { contextTokens: reply.contextTokens };
    if (prose.trim() === '') info.emptyOutputReason = emptyOutputReason(reply.finishReason);
    const chain = await this.run(
      state,
      base,
      'output',
      prose,
      info,
      spentMs ?? this.spentBeforeWorker(state),
    );
    // A hook's text past its limit was that script's `invalid` run, so what reaches here fits.
    // A blank text a script made (" ") is kept: it hides the reply, as AI Dungeon scripts mean
    // it to; an empty one ("") was a failed run and left the prose as it was (docs/scripting.md
    // §3.6).
    return {
      text: storableText(chain.text, SCRIPT_LIMITS.outputTextChars),
      effects: effectsOf(chain),
    };
  }

  /**
   * The turn's script time the API spent on onInput (its runs are in the projection with this
   * turn's id): one budget across the turn, not one per process.
   */
  private spentBeforeWorker(state: AdventureState): number {
    const turnId = state.inFlight?.turnId;
    if (!turnId) return 0;
    const budget = this.limitsOf(state).turnBudgetMs;
    return budget - turnBudgetLeft(budget, state.scriptRuns, turnId);
  }

  /** The adventure's own script limits under the operator's. */
  private limitsOf(state: AdventureState) {
    return scriptLimitsFor(state.settings, this.limits);
  }

  private async run(
    state: AdventureState,
    base: ScriptHookBase,
    hook: 'context' | 'output',
    text: string,
    info: Partial<HookInfo>,
    spentMs: number,
  ): Promise<HookChainResult> {
    const limits = this.limitsOf(state);
    // A SandboxUnavailableError (no child could start) propagates: the job throws for a
    // BullMQ retry, as an infrastructure fault should.
    return runHookChain(this.sandbox, {
      owner: base.owner,
      hook,
      scripts: base.scripts,
      text,
      states: base.states,
      cards: base.cards,
      history: base.history,
      info: {
        actionCount: base.actionCount,
        characterNames: base.characterNames,
        ...(base.characters && { characters: base.characters }),
        ...info,
        useCacheEfficient: state.settings.contextHookMode === 'append-only',
        storyModel: { name: state.settings.model || 'default', version: '' },
      },
      memory: base.memory,
      budgetMs: limits.turnBudgetMs - spentMs,
      hookTimeoutMs: limits.hookTimeoutMs,
      memoryLimitMb: limits.memoryLimitMb,
      newCardId: () => randomUUID(),
    });
  }
}
