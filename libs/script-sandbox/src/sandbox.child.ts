// A sandbox child process: forked by ScriptSandboxPool with `--no-node-snapshot` (isolated-vm
// needs it on Node 20+) and an environment holding no secrets. It runs one hook at a time in an
// isolated-vm isolate and answers with JSON text. The isolate is the security boundary; this
// process is the blast wall behind it (memoryLimit is a guideline, a V8 OOM can abort the
// process): the parent kills and respawns it, and it retires itself after enough runs or RSS.
import ivm from 'isolated-vm';
import {
  SOURCE_FIELDS,
  sourceFileName,
  type HarnessResult,
  type HookRunRequest,
  type HookRunResponse,
  type SourceField,
} from '@chronicle/scripting';
import { HARNESS_SOURCE } from './sandbox.harness';
import type { ChildMessage, CompileProblem, ParentMessage } from './sandbox.protocol';

const MAX_ISOLATES = Number(process.env.SANDBOX_MAX_ISOLATES ?? 32);
const MAX_RUNS = Number(process.env.SANDBOX_MAX_RUNS ?? 5000);
const MAX_RSS_BYTES = Number(process.env.SANDBOX_MAX_RSS_MB ?? 512) * 1024 * 1024;

interface CachedIsolate {
  isolate: ivm.Isolate;
  memoryLimitMb: number;
  harness: ivm.Script;
  scripts: Map<string, ivm.Script>;
}

/** Isolates per (owner, script, version), least recently used first. */
const isolates = new Map<string, CachedIsolate>();
let runs = 0;

function newIsolate(memoryLimitMb: number): CachedIsolate {
  const isolate = new ivm.Isolate({
    memoryLimit: memoryLimitMb,
    // The isolate's heap is corrupt: nothing in this process can be trusted any more.
    onCatastrophicError: () => process.abort(),
  });
  const harness = isolate.compileScriptSync(HARNESS_SOURCE, { filename: 'chronicle-harness.js' });
  return { isolate, memoryLimitMb, harness, scripts: new Map() };
}

function isolateKey(request: HookRunRequest): string {
  return `${request.owner}\u0000${request.scriptId}\u0000${request.version}`;
}

/** Whether a run sent without its sources can go ahead: its code is compiled here. */
function hasCompiled(request: HookRunRequest): boolean {
  const entry = isolates.get(isolateKey(request));
  if (!entry || entry.isolate.isDisposed || entry.memoryLimitMb !== request.memoryLimitMb) {
    return false;
  }
  return entry.scripts.has(request.hook) && (!request.library || entry.scripts.has('library'));
}

function isolateFor(request: HookRunRequest): CachedIsolate {
  const key = isolateKey(request);
  let entry = isolates.get(key);
  if (entry && (entry.isolate.isDisposed || entry.memoryLimitMb !== request.memoryLimitMb)) {
    dispose(key, entry);
    entry = undefined;
  }
  if (entry) {
    isolates.delete(key);
  } else {
    entry = newIsolate(request.memoryLimitMb);
  }
  isolates.set(key, entry);
  while (isolates.size > MAX_ISOLATES) {
    const [oldestKey, oldest] = isolates.entries().next().value as [string, CachedIsolate];
    dispose(oldestKey, oldest);
  }
  return entry;
}

function dispose(key: string, entry: CachedIsolate): void {
  isolates.delete(key);
  if (!entry.isolate.isDisposed) entry.isolate.dispose();
}

function compiled(entry: CachedIsolate, field: SourceField, source: string): ivm.Script {
  let script = entry.scripts.get(field);
  if (!script) {
    script = entry.isolate.compileScriptSync(source, { filename: sourceFileName(field) });
    entry.scripts.set(field, script);
  }
  return script;
}

/** An error's message for the script's owner: no host paths, no stack frames (docs/scripting.md, S12). */
export function ownerMessage(error: unknown): string {
  const raw =
    error instanceof Error
      ? `${error.name && error.name !== 'Error' ? `${error.name}: ` : ''}${error.message}`
      : String(error);
  return raw.replace(/(?:file:\/\/)?(?:\/[\w.@+-]+){2,}\/?/g, '<host>').slice(0, 1_000);
}

function classify(error: unknown, entry: CachedIsolate): HookRunResponse['outcome'] {
  const message = error instanceof Error ? error.message : String(error);
  if (entry.isolate.isDisposed || /memory limit/i.test(message)) return 'memory';
  // V8's own size caps (a string past ~512 MB, an ArrayBuffer it cannot allocate) are memory
  // bombs that stopped before the heap limit.
  if (/Invalid (string|array|typed array) length|Array buffer allocation failed/.test(message)) {
    return 'memory';
  }
  if (/execution timed out/i.test(message)) return 'timeout';
  return 'failed';
}

function run(request: HookRunRequest): HookRunResponse {
  const started = performance.now();
  const deadline = started + request.timeoutMs;
  const left = () => Math.max(1, Math.floor(deadline - performance.now()));
  const entry = isolateFor(request);
  const cpuBefore = entry.isolate.cpuTime;
  const elapsed = () => ({
    ms: performance.now() - started,
    cpuMs: entry.isolate.isDisposed ? 0 : Number(entry.isolate.cpuTime - cpuBefore) / 1e6,
  });
  let context: ivm.Context | undefined;
  let fin: ivm.Reference<(completion: unknown, failed?: boolean) => string> | undefined;
  try {
    context = entry.isolate.createContextSync();
    const init = entry.harness.runSync(context, {
      timeout: left(),
      reference: true,
    }) as ivm.Reference<(json: string) => unknown>;
    const payload = JSON.stringify({
      text: request.text,
      state: request.state,
      storyCards: request.storyCards,
      history: request.history,
      info: request.info,
      memory: request.memory,
    });
    fin = init.applySync(undefined, [payload], {
      timeout: left(),
      result: { reference: true },
    }) as unknown as ivm.Reference<(completion: unknown, failed?: boolean) => string>;
    if (request.library !== '') {
      compiled(entry, 'library', request.library).runSync(context, { timeout: left() });
    }
    const completion = compiled(entry, request.hook, request.source).runSync(context, {
      timeout: left(),
      reference: true,
    }) as ivm.Reference<unknown>;
    const out = fin.applySync(undefined, [completion.derefInto()], {
      timeout: left(),
      result: { copy: true },
    }) as unknown;
    if (typeof out !== 'string') throw new Error('the harness returned no result');
    const result = JSON.parse(out) as HarnessResult;
    return { outcome: 'ok', result, ...elapsed() };
  } catch (error) {
    const outcome = classify(error, entry);
    let logs: string[] | undefined;
    if (outcome === 'failed' && fin && context) {
      // The logs a script made before it threw are what its author needs most.
      try {
        const out = fin.applySync(undefined, [undefined, true], {
          timeout: 50,
          result: { copy: true },
        }) as string;
        logs = (JSON.parse(out) as HarnessResult).logs;
      } catch {
        logs = undefined;
      }
    }
    if (outcome !== 'failed') {
      // A timed-out or over-limit isolate is not reused: its heap may be half-built.
      for (const [key, cached] of isolates) if (cached === entry) dispose(key, cached);
    }
    const message =
      outcome === 'timeout'
        ? `timed out after ${request.timeoutMs} ms`
        : outcome === 'memory'
          ? `exceeded the ${request.memoryLimitMb} MB memory limit`
          : ownerMessage(error);
    return { outcome, error: message, ...(logs ? { logs } : {}), ...elapsed() };
  } finally {
    if (context && !entry.isolate.isDisposed) context.release();
  }
}

/** Compile errors of each source, checked in a throwaway isolate. */
function compile(sources: Partial<Record<SourceField, string>>): CompileProblem[] {
  const isolate = new ivm.Isolate({ memoryLimit: 64, onCatastrophicError: () => process.abort() });
  try {
    const problems: CompileProblem[] = [];
    for (const field of SOURCE_FIELDS) {
      const source = sources[field];
      if (source === undefined || source.trim() === '') continue;
      try {
        isolate.compileScriptSync(source, { filename: sourceFileName(field) }).release();
      } catch (error) {
        problems.push({ field, error: ownerMessage(error) });
      }
    }
    return problems;
  } finally {
    isolate.dispose();
  }
}

function send(message: ChildMessage, then?: () => void): void {
  process.send?.(JSON.stringify(message), undefined, {}, () => then?.());
}

/** Exits once the answer is on its way: the parent has already been told not to send more. */
const exitAfterSend = () => process.exit(0);

function retiring(): boolean {
  return runs >= MAX_RUNS || process.memoryUsage.rss() > MAX_RSS_BYTES;
}

process.on('message', (raw: unknown) => {
  if (typeof raw !== 'string') return;
  const message = JSON.parse(raw) as ParentMessage;
  runs++;
  if (message.kind === 'run') {
    if (message.sourcesOmitted && !hasCompiled(message.request)) {
      send({ id: message.id, kind: 'need-sources' });
      return;
    }
    const response = run(message.request);
    const retire = retiring();
    send(
      { id: message.id, kind: 'ran', response, retiring: retire },
      retire ? exitAfterSend : undefined,
    );
  } else if (message.kind === 'compile') {
    const problems = compile(message.sources);
    const retire = retiring();
    send(
      { id: message.id, kind: 'compiled', problems, retiring: retire },
      retire ? exitAfterSend : undefined,
    );
  }
});
process.on('disconnect', () => process.exit(0));
send({ kind: 'ready' });
