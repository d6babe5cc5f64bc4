// A 10,000-event rebuild must cost less than reading the rows from Postgres (the replay bench,
// see BENCHMARKS.md), or a rebuild could never keep up with the log. These bounds are loose (CI machines vary); the logged figures are the measurement.

import { project, projectFrom } from './adventure.projector';
import { canonicalJson } from './adventure.queries';
import { playedAdventure } from './testing/adventure.factory';

describe('projector cost', () => {
  it('rebuilds a 10,000-event adventure in linear time', () => {
    const history = playedAdventure(4_550, 1500);
    // Some head moves, as players make them: each refolds the path.
    for (let index = 0; index < 20; index++) {
      history.undo();
      history.redo();
    }
    const events = history.events;
    expect(events.length).toBeGreaterThanOrEqual(10_000);

    project(events);
    const runs: number[] = [];
    for (let run = 0; run < 5; run++) {
      const started = performance.now();
      project(events);
      runs.push(performance.now() - started);
    }
    runs.sort((a, b) => a - b);

    const snapshot = JSON.stringify(project(events.slice(0, events.length - 40)));
    const loadStarted = performance.now();
    const loaded = projectFrom(JSON.parse(snapshot), events.slice(events.length - 40));
    const loadMs = performance.now() - loadStarted;
    expect(canonicalJson(loaded)).toBe(canonicalJson(history.state));

    console.log(
      `fold of ${events.length} events: p50 ${runs[2].toFixed(1)} ms, best ${runs[0].toFixed(1)} ms; ` +
        `snapshot ${(snapshot.length / 1024).toFixed(0)} KiB, parse + 40 events ${loadMs.toFixed(1)} ms`,
    );
    expect(runs[2]).toBeLessThan(3_000);
  });
});
