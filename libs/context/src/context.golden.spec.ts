// The prompts of three fixture adventures, checked in under golden/, so that any change to the
// output (wording, order, a byte of whitespace) shows up in review. After an intended change,
// rewrite them with `UPDATE_GOLDEN=1 npx jest libs/context/src/context.golden.spec.ts` and read
// the diff.
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { assembleContextSync, memoryReader, type BuiltContext } from './index';
import { fixtureAdventures } from './testing';

function render(built: BuiltContext): string {
  const { report } = built;
  const summary = {
    sections: report.sections.map(({ label, tokens }) => ({ label, tokens })),
    tokens: report.tokens,
    cards: report.cards,
    memories: report.memories,
    history: report.history,
    settings: report.settings,
  };
  return [
    '===== system =====',
    built.system,
    '===== story =====',
    built.story,
    '===== report (prompt and section texts omitted) =====',
    JSON.stringify(summary, null, 2),
    '',
  ].join('\n');
}

describe('golden prompts', () => {
  it.each(fixtureAdventures().map((f) => [f.name, f] as const))('%s', (name, fixture) => {
    // Given a fixture adventure, When its context is assembled
    const actual = render(assembleContextSync(fixture.head, memoryReader(fixture.path)));
    const file = join(__dirname, 'golden', `${name}.txt`);
    if (process.env.UPDATE_GOLDEN === '1') writeFileSync(file, actual);
    // Then it is byte for byte the checked-in prompt
    expect(actual).toBe(readFileSync(file, 'utf8'));
  });
});
