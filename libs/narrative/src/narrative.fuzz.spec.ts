// Thousands of random and mutated replies through the whole pipeline: parse, referee, evolve,
// render. The PRNG is seeded, so a failure reproduces; the seed and case index are in the message.

import { checkEventShape } from './event-shape.validator';
import { renderCanon } from './narrative.canon';
import { foldTurn } from './narrative.fold';
import {
  MAX_EVENTS_PER_BLOCK,
  MAX_FACT_CHARS,
  MAX_NAME_CHARS,
  MAX_REJECTION_LINE_CHARS,
} from './narrative.limits';
import { referee } from './narrative.referee';
import { renderForPrompt, renderRejections } from './narrative.render';
import { initialNarrativeState } from './narrative.state';
import type { Canon, NarrativeState, ParsedReply, StateEvent } from './narrative.types';
import { parseReply } from './reply.parser';

const SEED = 0x5eed_2024;
const REPLIES = 4000;

/** mulberry32: small, fast, good enough to spread inputs. */
function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function makeGen(seed: number) {
  const rnd = prng(seed);
  const int = (n: number) => Math.floor(rnd() * n);
  const pick = <T>(items: readonly T[]): T => items[int(items.length)];
  const ids = [
    'player',
    'mira',
    'harbor',
    'lighthouse',
    'key',
    'lantern',
    'bob',
    'cave',
    'Mira',
    'old mill',
    '',
  ];
  const kinds = ['character', 'place', 'item', 'faction', 'other', 'dragon', 7];
  const statuses = ['alive', 'dead', 'wounded', 'Dead', 'missing', '', 'x'.repeat(60)];
  const words = [
    'The',
    'tide',
    'turns',
    'Mira',
    'runs',
    '```',
    '```state',
    '{',
    '}',
    '"',
    '\n',
    '\n\n',
    'ünïcode',
    '🐉',
    '`',
  ];
  const junk = () =>
    Array.from({ length: int(40) }, () => String.fromCharCode(int(0x2fff))).join('');

  const value = (): unknown =>
    pick<() => unknown>([
      () => pick(ids),
      () => int(100),
      () => null,
      () => true,
      () => [pick(ids)],
      () => ({}),
      () => 'y'.repeat(int(400)),
    ])();

  function event(): Record<string, unknown> {
    const type = pick(['enter', 'status', 'move', 'gain', 'lose', 'fact', 'teleport', 'Enter']);
    const e: Record<string, unknown> = { type };
    if (rnd() < 0.9) e.id = pick(ids);
    if (type.toLowerCase() === 'enter') {
      e.name =
        rnd() < 0.95
          ? pick(['Mira', 'Bob', 'The Cave', 'n'.repeat(MAX_NAME_CHARS + int(3))])
          : value();
      e.kind = pick(kinds);
      if (rnd() < 0.5) e.status = pick(statuses);
      if (rnd() < 0.5) e.at = pick(ids);
      if (rnd() < 0.3) e.desc = junk();
    }
    if (type === 'status') e.to = rnd() < 0.9 ? pick(statuses) : value();
    if (type === 'move') e.to = pick(ids);
    if (type === 'gain' || type === 'lose') {
      e.holder = rnd() < 0.9 ? pick(ids) : value();
      e.item = pick(ids);
    }
    if (type === 'fact') {
      e.text =
        rnd() < 0.9
          ? pick(['Mira lies', 'The key is cursed', 't'.repeat(MAX_FACT_CHARS + int(3))])
          : value();
      if (rnd() < 0.5) e.about = rnd() < 0.8 ? [pick(ids), pick(ids)] : value();
    }
    if (rnd() < 0.1) e[pick(['id', 'to', 'holder', 'item'])] = value();
    return e;
  }

  function line(): string {
    return pick<() => string>([
      () => JSON.stringify(event()),
      () => JSON.stringify(event()),
      () => JSON.stringify(event()),
      () => JSON.stringify(event(), null, 2),
      () => `${JSON.stringify(event())},`,
      () => JSON.stringify([event(), event()]),
      () => JSON.stringify(event()).slice(0, int(30)),
      () => junk(),
      () => pick(['[', ']', '', '   ', 'null', '42', '"text"', '```', '```state']),
    ])();
  }

  function block(): string {
    const n = rnd() < 0.05 ? 60 + int(60) : int(8);
    const body =
      rnd() < 0.15
        ? JSON.stringify(Array.from({ length: n }, event))
        : Array.from({ length: n }, line).join('\n');
    const opener = pick(['```state', '```State', '````state', 'x ```state', '```state jsonl']);
    return `${opener}\n${body}${rnd() < 0.8 ? '\n```' : ''}`;
  }

  function prose(): string {
    return Array.from({ length: int(30) }, () => pick(words)).join(' ');
  }

  function reply(): string {
    const parts: string[] = [];
    const blocks = int(3);
    if (rnd() < 0.85) parts.push(prose());
    for (let i = 0; i < blocks; i++) {
      parts.push(block());
      if (rnd() < 0.3) parts.push(prose());
    }
    return parts.join(pick(['\n', '\n\n', ' ', '\r\n']));
  }

  function mutate(text: string): string {
    let out = text;
    for (let m = int(6); m >= 0; m--) {
      const at = int(out.length + 1);
      out = pick<() => string>([
        () => out.slice(0, at),
        () => out.slice(0, at) + out.slice(at + 1 + int(5)),
        () =>
          out.slice(0, at) +
          pick(['{', '}', '[', ']', '"', ',', '\n', '`', '```', '\\', '\u0000']) +
          out.slice(at),
        () => out.slice(0, at) + out.slice(int(out.length)),
        () => out + out.slice(at),
      ])();
    }
    return out;
  }

  return { rnd, int, pick, reply, mutate, event };
}

const canon: Canon = {
  rules: ['The dead stay dead'],
  forbiddenStatusChanges: [
    { from: 'dead', to: 'alive' },
    { from: 'destroyed', to: 'whole' },
  ],
};

/** The properties every parsed reply must have; returns the ones it breaks. */
function parsedViolations(reply: string): { parsed: ParsedReply; broken: string[] } {
  const parsed = parseReply(reply);
  const broken: string[] = [];
  const check = (ok: boolean, what: string) => {
    if (!ok) broken.push(what);
  };
  // Never an empty narration silently: either there is narration or the turn is flagged.
  check(
    parsed.onlyBlock === (parsed.narration === ''),
    'onlyBlock flags exactly the empty narration',
  );
  check(parsed.narration === parsed.narration.trim(), 'narration is trimmed');
  // Stripping is complete: the stored narration holds no block that a re-read would find.
  const reread = parseReply(parsed.narration);
  check(reread.events.length === 0 && reread.rejections.length === 0, 'narration holds no block');
  check(reread.narration === parsed.narration, 'stripping is idempotent');
  check(parsed.events.length <= MAX_EVENTS_PER_BLOCK, 'events within the limit');
  check(parsed.rejections.length <= MAX_EVENTS_PER_BLOCK + 2, 'rejections within the limit');
  check(
    parsed.events.every((event) => checkEventShape(event, '').ok),
    'events are well-formed',
  );
  check(
    parsed.rejections.every(
      (r) => r.line.length <= MAX_REJECTION_LINE_CHARS && r.reason !== '' && r.fix !== '',
    ),
    'rejections are bounded and carry a reason and a fix',
  );
  return { parsed, broken };
}

describe('narrative fuzz', () => {
  it(`given ${REPLIES} random and mutated replies, then parse, referee, evolve and render never throw and stay within limits`, () => {
    const gen = makeGen(SEED);
    let state: NarrativeState = initialNarrativeState();
    let accepted = 0;
    let rejected = 0;
    let onlyBlock = 0;

    const failures: string[] = [];
    for (let i = 0; i < REPLIES; i++) {
      const base = gen.reply();
      const reply = i % 2 === 0 ? base : gen.mutate(base);
      const { parsed, broken } = parsedViolations(reply);
      if (parsed.onlyBlock) onlyBlock++;

      const verdict = referee(state, canon, parsed.events);
      if (verdict.accepted.length + verdict.rejected.length > parsed.events.length) {
        broken.push('the referee returns no more verdicts than events');
      }
      if (verdict.rejected.some((r) => r.fix === '')) broken.push('every refusal has a fix');

      const before = JSON.stringify(state);
      const next = foldTurn(state, { accepted: verdict.accepted });
      if (JSON.stringify(state) !== before) broken.push('the fold does not mutate its input');
      if (renderForPrompt(next) !== renderForPrompt(JSON.parse(JSON.stringify(next)))) {
        broken.push('rendering depends only on the state');
      }
      if (renderRejections([...parsed.rejections, ...verdict.rejected]).length > 20_000) {
        broken.push('the refusal note is bounded');
      }
      for (const what of broken) failures.push(`seed ${SEED} case ${i}: ${what}`);

      state = next;
      accepted += verdict.accepted.length;
      rejected += verdict.rejected.length;
      // Restart the world now and then so that both empty and busy states are exercised.
      if (gen.int(50) === 0) state = initialNarrativeState();
    }

    expect(failures.slice(0, 10)).toEqual([]);
    // The generator must reach every outcome, or the properties above prove little.
    expect(accepted).toBeGreaterThan(500);
    expect(rejected).toBeGreaterThan(500);
    expect(onlyBlock).toBeGreaterThan(10);
    expect(renderCanon(canon)).toContain('Nothing that is dead can become alive.');
  });

  it('given thousands of arbitrary values handed straight to the referee, then it never throws and respects the limit', () => {
    const gen = makeGen(SEED + 1);
    const weird: unknown[] = [
      undefined,
      null,
      0,
      '',
      [],
      {},
      Symbol.iterator,
      () => 1,
      BigInt(1),
      { type: { toString: 1 } },
    ];
    let overLimit = 0;
    for (let i = 0; i < 2000; i++) {
      const events = Array.from({ length: gen.int(80) }, () =>
        gen.rnd() < 0.2 ? gen.pick(weird) : gen.event(),
      );
      const state: NarrativeState =
        gen.rnd() < 0.5
          ? initialNarrativeState()
          : {
              entities: {
                mira: { id: 'mira', name: 'Mira', kind: 'character', status: 'dead' },
                harbor: { id: 'harbor', name: 'H', kind: 'place' },
              },
              facts: [],
            };

      const verdict = referee(state, canon, events as StateEvent[]);

      if (verdict.accepted.length + verdict.rejected.length > MAX_EVENTS_PER_BLOCK + 1) overLimit++;
    }
    expect(overLimit).toBe(0);
  });
});
