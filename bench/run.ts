// `npm run bench [-- name… [--option value…]]`: runs every `*.bench.js` under dist/bench (or
// the one a word names whole, else those whose file name contains it), one after another so they do not compete
// for the two cores, and prints each one's table. `--option value` pairs (or `--option=value`)
// go to every benchmark that runs; one that takes none ignores them (`npm run bench -- scale
// --adventures 200 --seconds 15` runs a small scale bench).
import { readdirSync } from 'node:fs';
import { join } from 'node:path';

/** `--name value` options from the command line, by name without the dashes. */
export type BenchOptions = Readonly<Record<string, string>>;

export interface BenchModule {
  /** Runs the benchmark and returns its report as Markdown (a heading, a table, the verdicts). */
  default: (options: BenchOptions) => Promise<string>;
}

/** Splits the arguments into file-name filters and `--name value` / `--name=value` options. */
function parseArguments(args: readonly string[]): { filters: string[]; options: BenchOptions } {
  const filters: string[] = [];
  const options: Record<string, string> = {};
  for (let i = 0; i < args.length; i++) {
    const arg = args[i];
    if (!arg.startsWith('--')) {
      filters.push(arg);
      continue;
    }
    const eq = arg.indexOf('=');
    if (eq > 0) options[arg.slice(2, eq)] = arg.slice(eq + 1);
    else if (i + 1 < args.length && !args[i + 1].startsWith('--'))
      options[arg.slice(2)] = args[++i];
    else options[arg.slice(2)] = 'true';
  }
  return { filters, options };
}

/**
 * The benches a command names: a word that is a bench's whole name (`recall` for
 * recall.bench.js) selects that one alone, so a bench whose name merely contains it is not run
 * too; any other word selects every bench whose file name contains it.
 */
export function selectBenches(files: readonly string[], filters: readonly string[]): string[] {
  if (filters.length === 0) return [...files].sort();
  const selected = new Set<string>();
  for (const word of filters) {
    const exact = files.find((f) => f === `${word}.bench.js`);
    for (const f of exact ? [exact] : files.filter((f) => f.includes(word))) selected.add(f);
  }
  return [...selected].sort();
}

async function main(): Promise<void> {
  const { filters, options } = parseArguments(process.argv.slice(2));
  const files = selectBenches(
    readdirSync(__dirname).filter((f) => f.endsWith('.bench.js')),
    filters,
  );
  if (files.length === 0) {
    console.error(`no benchmark matches ${filters.join(', ')}`);
    process.exit(2);
  }
  for (const file of files) {
    const bench = (await import(join(__dirname, file))) as BenchModule;
    const started = Date.now();
    const report = await bench.default(options);
    console.log(
      `${report.trim()}\n\n_(${file}, ${((Date.now() - started) / 1000).toFixed(1)} s)_\n`,
    );
  }
}

// Run as `node dist/bench/run.js`, not when imported (for selectBenches).
if (require.main === module) {
  void main().catch((error: unknown) => {
    console.error(error);
    process.exit(1);
  });
}
