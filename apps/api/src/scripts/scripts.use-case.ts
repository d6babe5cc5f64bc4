import { randomUUID } from 'node:crypto';
import { Inject, Injectable } from '@nestjs/common';
import {
  DomainError,
  NotFoundError,
  scriptStateAtHead,
  type AdventureState,
  type ScriptCommand,
  type ScriptInput,
} from '@chronicle/adventure';
import {
  AdventureCommandHandler,
  scriptDefinitions,
  scriptHookBase,
} from '@chronicle/adventure-store';
import {
  SCRIPT_RUN_LIMITS,
  ScriptSandboxPool,
  SandboxUnavailableError,
  type ScriptRunLimits,
} from '@chronicle/script-sandbox';
import {
  renderContextView,
  runHookChain,
  scriptLimitsFor,
  syntaxProblem,
  type SourceField,
} from '@chronicle/scripting';
import { requestMetadata } from '../http/request-actor';
import type { CreateScriptDto, EditScriptDto, ScriptTestDto } from './script.dto';

/** A source that does not compile: 422 naming the tab, the line and the column. */
export class ScriptSyntaxError extends DomainError {
  readonly kind = 'limit' as const;
  constructor(message: string) {
    super(message);
    this.name = 'ScriptSyntaxError';
  }
}

/** No sandbox process answers: 503 with Retry-After (the error filter's `unavailable`). */
export class ScriptsUnavailableError extends DomainError {
  readonly kind = 'unavailable' as const;
  readonly retryAfterSeconds = 2;
  constructor() {
    super('scripts cannot run right now; try again in a moment');
    this.name = 'ScriptsUnavailableError';
  }
}

type Sources = Partial<Record<SourceField, string>>;

async function sandboxed<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    if (error instanceof SandboxUnavailableError) throw new ScriptsUnavailableError();
    throw error;
  }
}

/**
 * Compiles the given sources in the sandbox (only an engine can say what parses) and answers
 * 422 naming each broken tab with its line and column; nothing is written.
 */
export async function checkScriptSyntax(
  sandbox: ScriptSandboxPool,
  sources: Sources,
): Promise<void> {
  const given: Sources = {};
  for (const field of ['library', 'input', 'context', 'output'] as const) {
    if (typeof sources[field] === 'string') given[field] = sources[field];
  }
  if (Object.keys(given).length === 0) return;
  const problems = await sandboxed(() => sandbox.compile(given));
  if (problems.length === 0) return;
  throw new ScriptSyntaxError(
    problems
      .map(({ field, error }) => {
        const p = syntaxProblem(field, error);
        return p.line !== undefined
          ? `${field} has a syntax error at line ${p.line}, column ${p.column}: ${p.message}`
          : `${field} does not compile: ${p.message}`;
      })
      .join('; '),
  );
}

/**
 * The owner's script routes (docs/scripting.md §0): sources are compiled in the sandbox before
 * they are decided, so a syntax error answers 422 with its position and writes nothing.
 */
@Injectable()
export class ScriptsUseCase {
  constructor(
    private readonly adventures: AdventureCommandHandler,
    private readonly sandbox: ScriptSandboxPool,
    @Inject(SCRIPT_RUN_LIMITS) private readonly limits: ScriptRunLimits,
  ) {}

  async list(adventureId: string) {
    const state = await this.adventures.get(adventureId);
    return { scripts: scriptViews(state), adventureVersion: state.version };
  }

  async add(adventureId: string, body: CreateScriptDto) {
    const script: ScriptInput = { id: randomUUID(), ...definedSources(body), name: body.name };
    await this.checkSyntax(script);
    const { state } = await this.run(adventureId, { type: 'AddScript', data: { script } });
    return { ...scriptView(state, script.id), adventureVersion: state.version };
  }

  async edit(adventureId: string, scriptId: string, body: EditScriptDto) {
    const changes = {
      ...definedSources(body),
      ...(body.name !== undefined ? { name: body.name } : {}),
    };
    await this.checkSyntax(changes);
    const { state } = await this.run(adventureId, {
      type: 'EditScript',
      data: { scriptId, changes },
    });
    return { ...scriptView(state, scriptId), adventureVersion: state.version };
  }

  async remove(adventureId: string, scriptId: string) {
    const { state } = await this.run(adventureId, { type: 'RemoveScript', data: { scriptId } });
    return { scriptId, adventureVersion: state.version };
  }

  async reorder(adventureId: string, ids: string[]) {
    const { state } = await this.run(adventureId, { type: 'ReorderScripts', data: { ids } });
    return {
      scripts: scriptViews(state).map(({ id, position }) => ({ id, position })),
      adventureVersion: state.version,
    };
  }

  async logs(adventureId: string) {
    const state = await this.adventures.get(adventureId);
    if (state.id === null) throw new NotFoundError(`adventure ${adventureId} not found`);
    const runs = [...state.scriptRuns].reverse().map((run) => ({
      scriptId: run.scriptId,
      hook: run.hook,
      outcome: run.outcome,
      ms: run.ms,
      logs: run.logs,
      ...(run.error ? { error: run.error } : {}),
      turnId: run.turnId,
    }));
    return { runs };
  }

  async stateOf(adventureId: string, scriptId: string) {
    const state = await this.adventures.get(adventureId);
    requireScript(state, scriptId);
    return { state: scriptStateAtHead(state, scriptId) };
  }

  /** AID's Script Test: one hook on the current projection; nothing is appended. */
  async test(adventureId: string, body: ScriptTestDto) {
    const state = await this.adventures.get(adventureId);
    if (body.scriptId) requireScript(state, body.scriptId);
    const base = await scriptHookBase(this.adventures, {
      ...state,
      scripts: state.scripts.filter((s) => !body.scriptId || s.id === body.scriptId),
    });
    if (!base) {
      return { text: body.text ?? '', stop: false, logs: [], state: {}, cardOps: [], runs: [] };
    }
    const history = base.history;
    const defaultText =
      body.hook === 'input'
        ? ''
        : body.hook === 'output'
          ? ([...history].reverse().find((h) => h.type === 'continue')?.text ?? '')
          : renderContextView({
              plotEssentials: state.fields.plotEssentials,
              lore: [],
              summary: '',
              memories: [],
              history: history.map((h) => h.text),
              authorsNote: state.fields.authorsNote,
              frontMemory: '',
            }).text;
    const limits = scriptLimitsFor(state.settings, this.limits);
    const chain = await this.runChain(() =>
      runHookChain(this.sandbox, {
        owner: base.owner,
        hook: body.hook,
        scripts: base.scripts,
        text: body.text ?? defaultText,
        states: base.states,
        cards: base.cards,
        history,
        info: {
          actionCount: base.actionCount + (body.hook === 'input' ? 0 : 1),
          characterNames: base.characterNames,
          ...(base.characters && { characters: base.characters }),
          ...(body.hook === 'context'
            ? { useCacheEfficient: state.settings.contextHookMode === 'append-only' }
            : {}),
        },
        memory: base.memory,
        budgetMs: limits.turnBudgetMs,
        hookTimeoutMs: limits.hookTimeoutMs,
        memoryLimitMb: limits.memoryLimitMb,
        newCardId: () => randomUUID(),
      }),
    );
    const onlyState = body.scriptId
      ? (chain.states[body.scriptId] ?? base.states[body.scriptId])
      : Object.fromEntries(
          base.scripts.map((s) => [s.id, chain.states[s.id] ?? base.states[s.id]]),
        );
    return {
      text: chain.stopped ? null : chain.text,
      stop: chain.stopped,
      ...(chain.stopped ? { message: chain.stopMessage ?? '' } : {}),
      logs: chain.runs.flatMap((r) => r.logs),
      state: onlyState,
      cardOps: chain.cardOps,
      runs: chain.runs.map(({ scriptId, hook, outcome, ms, error }) => ({
        scriptId,
        hook,
        outcome,
        ms: Math.round(ms * 100) / 100,
        ...(error ? { error } : {}),
      })),
    };
  }

  private checkSyntax(sources: Sources): Promise<void> {
    return checkScriptSyntax(this.sandbox, sources);
  }

  private runChain<T>(work: () => Promise<T>): Promise<T> {
    return sandboxed(work);
  }

  private run(adventureId: string, command: ScriptCommand) {
    return this.adventures.handle(adventureId, command, requestMetadata());
  }
}

function definedSources(body: CreateScriptDto | EditScriptDto) {
  const out: Sources & { enabled?: boolean } = {};
  for (const field of ['library', 'input', 'context', 'output'] as const) {
    if (body[field] !== undefined) out[field] = body[field];
  }
  if (body.enabled !== undefined) out.enabled = body.enabled;
  return out;
}

function requireScript(state: AdventureState, scriptId: string) {
  const script = state.scripts.find((s) => s.id === scriptId);
  if (!script) throw new NotFoundError(`script ${scriptId} not found in this adventure`);
  return script;
}

function scriptViews(state: AdventureState) {
  return scriptDefinitions(state.scripts);
}

function scriptView(state: AdventureState, scriptId: string) {
  const view = scriptViews(state).find((s) => s.id === scriptId);
  if (!view) throw new NotFoundError(`script ${scriptId} not found in this adventure`);
  return view;
}
