// A hook run request with defaults, for the sandbox's specs and the benchmark.
import type { HookRunRequest } from '@chronicle/scripting';

let version = 0;

export function aHookRequest(overrides: Partial<HookRunRequest> = {}): HookRunRequest {
  return {
    owner: 'owner-1',
    scriptId: 'script-1',
    // A fresh version per request unless given: no compiled code leaks between cases.
    version: ++version,
    hook: 'input',
    library: '',
    source: 'modifier(text)',
    text: '\n> You go to the store.\n',
    state: {},
    storyCards: [],
    history: [
      { text: 'You stand at the door.', type: 'start' },
      { text: '\n> You look around.\n', type: 'do' },
      { text: 'The street is empty.', type: 'continue' },
    ],
    info: { actionCount: 3, characterNames: ['Ada'] },
    memory: { context: 'You keep the light.', authorsNote: '' },
    timeoutMs: 2000,
    memoryLimitMb: 64,
    ...overrides,
  };
}
