import { scriptNotice, scriptNoticesOfTurn, scriptStreamFrames } from './script.notices';

const scripts = [{ id: 's1', name: 'Dice' }];

describe('script notices', () => {
  it('name the script, the hook and the kind of failure, nothing of the engine', () => {
    expect(scriptNotice({ scriptId: 's1', hook: 'input', outcome: 'timeout' }, scripts)).toBe(
      'The script "Dice" failed in its input hook (it ran out of time); the turn went on without it.',
    );
    expect(scriptNotice({ scriptId: 'gone', hook: 'output', outcome: 'crashed' }, scripts)).toMatch(
      /^A script failed in its output hook \(its sandbox stopped\)/,
    );
    expect(scriptNotice({ scriptId: 's1', hook: 'context', outcome: 'ok' }, scripts)).toBeNull();
    expect(
      scriptNotice({ scriptId: 's1', hook: 'context', outcome: 'stopped' }, scripts),
    ).toBeNull();
    expect(
      scriptNotice(
        { scriptId: 's1', hook: 'context', outcome: 'ok', contextChange: 'discarded' },
        scripts,
      ),
    ).toMatch(/append-only context mode/);
  });

  it('become stream frames beside the messages, in the order of the events', () => {
    const failed = {
      turnId: 't',
      scriptId: 's1',
      hook: 'output' as const,
      outcome: 'failed' as const,
      textChanged: false,
      ms: 1,
      cpuMs: 1,
      logs: [],
      error: 'Dice (output): TypeError: x is not a function [output.js:1:1]',
    };
    const frames = scriptStreamFrames(
      [
        { type: 'Narrated', data: {} },
        { type: 'ScriptHookRan', data: failed },
        { type: 'ScriptMessagePosted', data: { message: 'hi' } },
      ],
      scripts,
    );
    expect(frames).toEqual([
      {
        event: 'notice',
        data: {
          text: 'The script "Dice" failed in its output hook (it threw an error); the turn went on without it.',
          scriptId: 's1',
          hook: 'output',
        },
      },
      { event: 'message', data: { text: 'hi' } },
    ]);
    expect(JSON.stringify(frames)).not.toContain('TypeError');
    expect(scriptNoticesOfTurn({ scripts: [], scriptRuns: [failed] }, 't')).toHaveLength(1);
    expect(scriptNoticesOfTurn({ scripts: [], scriptRuns: [failed] }, 'other')).toEqual([]);
  });
});
