import { adventureStreamId, adventureIdOfStream } from './adventure.events';
import { EVENT_SCHEMA_VERSIONS } from './event.catalogue';
import { UnreadableEventError, createUpcasterRegistry, upcast } from './event.upcaster';

describe('upcasting', () => {
  // A registry shaped like a real change: PlayerActed v1 named the input `kind`, v2 calls it
  // `inputType`, v3 adds `source`.
  const registry = createUpcasterRegistry(
    { PlayerActed: 3 },
    {
      PlayerActed: {
        1: (data) => {
          const { kind, ...rest } = data as { kind: string };
          return { ...rest, inputType: kind };
        },
        2: (data) => ({ ...(data as object), source: 'player' }),
      },
    },
  );

  it('brings an old event to the current shape step by step', () => {
    expect(registry.upcast('PlayerActed', 1, { turnId: 't', kind: 'do' })).toEqual({
      turnId: 't',
      inputType: 'do',
      source: 'player',
    });
    expect(registry.upcast('PlayerActed', 3, { turnId: 't' })).toEqual({ turnId: 't' });
  });

  it('refuses events it cannot read: newer, unknown, or a bad version', () => {
    expect(() => registry.upcast('PlayerActed', 4, {})).toThrow(UnreadableEventError);
    expect(() => registry.upcast('Mystery', 1, {})).toThrow(/unknown event type/);
    expect(() => registry.upcast('PlayerActed', 0, {})).toThrow(/not valid/);
  });

  it('fails at construction when a step is missing', () => {
    expect(() => createUpcasterRegistry({ Narrated: 2 }, {})).toThrow(/Narrated v1 → v2/);
  });

  it('reads every current adventure event as it is', () => {
    for (const [type, version] of Object.entries(EVENT_SCHEMA_VERSIONS)) {
      expect(upcast(type, version, { same: true })).toEqual({ same: true });
    }
  });

  it('names one stream per adventure', () => {
    expect(adventureStreamId('0b6c')).toBe('adventure-0b6c');
    expect(adventureIdOfStream('adventure-0b6c')).toBe('0b6c');
    expect(adventureIdOfStream('memory-0b6c')).toBeNull();
  });
});

describe('adventure upcasters', () => {
  it('given a v1 SummaryWritten (before chapters), when read, then it folded no chapters', () => {
    expect(EVENT_SCHEMA_VERSIONS.SummaryWritten).toBe(2);
    const v1 = {
      summaryId: 's-1',
      text: 'Mira kept the light.',
      anchorActionId: 'a-9',
      sourceStart: 0,
      sourceEnd: 9,
      handEdited: false,
      replacesSummaryId: null,
    };
    expect(upcast('SummaryWritten', 1, v1)).toEqual({ ...v1, chapterIds: [] });
  });

  it("reads a v1 NarrationFailed (`error`) as today's (`message`, and the code it stands for)", () => {
    expect(EVENT_SCHEMA_VERSIONS.NarrationFailed).toBe(3);
    expect(
      upcast('NarrationFailed', 1, { turnId: 't-1', error: 'model unreachable', attempts: 3 }),
    ).toEqual({
      turnId: 't-1',
      code: 'model_unreachable',
      message: 'model unreachable',
      attempts: 3,
    });
  });

  it.each([
    [
      'The model provider at http://x/v1 refused the API key (HTTP 401): check the API key',
      'model_unauthorized',
    ],
    [
      'The model "m" or the endpoint path was not found at http://x/v1 (HTTP 404)',
      'model_not_found',
    ],
    [
      'The model provider is limiting how fast requests may be sent (HTTP 429, a burst limit)',
      'model_rate_limited',
    ],
    ['The model "m" took longer than 120 s to answer the narration request.', 'model_timeout'],
    ['Nothing is listening at http://x/v1: start the model server', 'model_unreachable'],
    ['The model provider had an internal error (HTTP 500) during narration.', 'model_unreachable'],
    ['The model provider rejected the narration request for "m" (HTTP 400).', 'model_bad_request'],
    [
      'The connection to the model provider closed before the narration was finished',
      'model_stream_broken',
    ],
    [
      'The narration could not be finished: the worker running it stopped too many times. Try again.',
      'lost',
    ],
    [
      'The narration failed because of an internal error; the turn was not saved. Try again.',
      'internal',
    ],
  ])('reads a v2 NarrationFailed "%s" with code %s', (message, code) => {
    expect(upcast('NarrationFailed', 2, { turnId: 't-1', message, attempts: 3 })).toEqual({
      turnId: 't-1',
      code,
      message,
      attempts: 3,
    });
  });
});

describe('the history mode of adventures created before it was a setting', () => {
  it('reads a v1 AdventureCreated as narrated with the seed sliding window', () => {
    // Given an AdventureCreated written before `settings.historyMode` existed
    const v1 = { adventureId: 'a', settings: { contextTokenBudget: 8192, model: '' } };
    // When it is read today
    const read = upcast('AdventureCreated', 1, v1) as { settings: Record<string, unknown> };
    // Then it keeps the window it was narrated with, and its other settings
    expect(EVENT_SCHEMA_VERSIONS.AdventureCreated).toBe(2);
    expect(read.settings).toEqual({ historyMode: 'sliding', contextTokenBudget: 8192, model: '' });
  });

  it('leaves a v2 AdventureCreated as it was written', () => {
    const v2 = { adventureId: 'a', settings: { historyMode: 'stable' } };
    expect(upcast('AdventureCreated', 2, v2)).toEqual(v2);
  });

  it("reads a v1 MemoryWritten as v2: a worker memory's sources are to be found (null), a hand-written one has none", () => {
    expect(EVENT_SCHEMA_VERSIONS.MemoryWritten).toBe(2);
    const worker = {
      memoryId: 'm',
      text: 'Mira lit the lamp.',
      sourceStart: 1,
      sourceEnd: 6,
      anchorActionId: 'a-6',
      createdBy: 'worker',
    };
    expect(upcast('MemoryWritten', 1, worker)).toEqual({ ...worker, sourceActionIds: null });
    const player = { ...worker, sourceStart: null, sourceEnd: null, createdBy: 'player' };
    expect(upcast('MemoryWritten', 1, player)).toEqual({ ...player, sourceActionIds: [] });
  });
});
