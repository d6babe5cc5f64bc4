// `npm run bench [-- name…]`: runs every `*.bench.js` under dist/bench (or the
// ones whose file name contains a given word), one after another so they do
// not compete for the two cores, and prints each one's table.
import { readdirSync } from 'node:fs';
import { join } from 'node:path';

export interface BenchModule {
  /** Runs the benchmark and returns its report as Markdown (a heading, a table, the verdicts). */
  default: () => Promise<string>;
}

async function main(): Promise<void> {
  const filters = process.argv.slice(2);
  const files = readdirSync(__dirname)
    .filter((f) => f.endsWith('.bench.js'))
    .filter((f) => filters.length === 0 || filters.some((w) => f.includes(w)))
    .sort();
  if (files.length === 0) {
    console.error(`no benchmark matches ${filters.join(', ')}`);
    process.exit(2);
  }
  for (const file of files) {
    const bench = (await import(join(__dirname, file))) as BenchModule;
    const started = Date.now();
    const report = await bench.default();
    console.log(
      `${report.trim()}\n\n_(${file}, ${((Date.now() - started) / 1000).toFixed(1)} s)_\n`,
    );
  }
}

void main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
