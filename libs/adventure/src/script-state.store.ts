// Script states along the story tree, stored so the projection grows with what changed, not
// with the nodes × the state's size. A script's state at a node is a record; records are
// immutable and form chains: a record holds either a whole state or a patch against the record
// it was made from (the state the script had when its hook ran), so a counter bumped every turn
// costs a few bytes a turn instead of a copy of the whole state. Every KEYFRAME_EVERY-th record
// of a chain, or one whose patch is not much smaller than the state, holds the whole state, so
// resolving one walks at most that many records. Records are never edited: a node whose record
// is replaced (a later hook of the same turn, a stop at the head) points at a new record, and
// the records others were made from stay as they were.
//
// All of it is plain JSON (the projection is snapshotted as jsonb): no undefined, no Map.

/**
 * A change at a path: `[path, value]` sets it, `[path]` deletes it, `[path, start, count, items]`
 * splices the array there (a rolling window: drop the oldest, append the newest). Arrays shrink
 * by setting `length`.
 */
export type StatePatchOp = [string[]] | [string[], unknown] | [string[], number, number, unknown[]];

export interface ScriptStateRecord {
  /** The record this one patches; null when it holds the whole state. */
  prev: string | null;
  /** Patches between this record and the whole state it is resolved from (0 for a whole one). */
  chain: number;
  /** The whole state, when `prev` is null. */
  state: Record<string, unknown> | null;
  /** The changes against `prev`'s state, when there is one. */
  patch: StatePatchOp[] | null;
}

export interface ScriptStateTables {
  /** By story node, then by script: the id of the record of its state there. */
  scriptStates: Record<string, Record<string, string>>;
  /** Every record, by id (`<stream version>:<script id>`: unique, never reused). */
  scriptStateRecords: Record<string, ScriptStateRecord>;
}

/** How many patches at most lie between a record and the whole state it resolves from. */
export const KEYFRAME_EVERY = 16;

type Json = unknown;

function isPlainObject(value: Json): value is Record<string, Json> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function sameJson(a: Json, b: Json): boolean {
  if (a === b) return true;
  if (Array.isArray(a)) {
    if (!Array.isArray(b) || a.length !== b.length) return false;
    return a.every((item, i) => sameJson(item, b[i]));
  }
  if (isPlainObject(a)) {
    if (!isPlainObject(b)) return false;
    const keys = Object.keys(a);
    if (keys.length !== Object.keys(b).length) return false;
    return keys.every(
      (key) => Object.prototype.hasOwnProperty.call(b, key) && sameJson(a[key], b[key]),
    );
  }
  return false;
}

/** How far the longest shift search looks: a window that drops more a turn is rewritten whole. */
const MAX_SHIFT = 8;

/** k when `b` is `a` with its first k items dropped and new ones appended (a rolling window). */
function windowShift(a: readonly Json[], b: readonly Json[]): number | null {
  for (let k = 1; k <= Math.min(MAX_SHIFT, a.length); k++) {
    const kept = a.length - k;
    if (b.length < kept) return null;
    let same = true;
    for (let i = 0; i < kept && same; i++) same = sameJson(a[k + i], b[i]);
    if (same) return k;
  }
  return null;
}

function diffInto(a: Json, b: Json, path: string[], ops: StatePatchOp[]): void {
  if (Array.isArray(a) && Array.isArray(b)) {
    const shift = a.length > 0 && !sameJson(a[0], b[0]) ? windowShift(a, b) : null;
    if (shift !== null) {
      const kept = a.length - shift;
      ops.push([path, 0, shift, []]);
      if (b.length > kept) ops.push([path, kept, 0, b.slice(kept)]);
      return;
    }
    if (b.length < a.length) ops.push([[...path, 'length'], b.length]);
    for (let i = 0; i < b.length; i++) {
      if (i >= a.length) ops.push([[...path, String(i)], b[i]]);
      else if (!sameJson(a[i], b[i])) diffInto(a[i], b[i], [...path, String(i)], ops);
    }
    return;
  }
  if (isPlainObject(a) && isPlainObject(b)) {
    for (const key of Object.keys(a)) {
      if (!Object.prototype.hasOwnProperty.call(b, key)) ops.push([[...path, key]]);
    }
    for (const key of Object.keys(b)) {
      if (!Object.prototype.hasOwnProperty.call(a, key)) ops.push([[...path, key], b[key]]);
      else if (!sameJson(a[key], b[key])) diffInto(a[key], b[key], [...path, key], ops);
    }
    return;
  }
  ops.push([path, b]);
}

/** The changes that turn `from` into `to` (both plain JSON objects). */
export function diffState(
  from: Record<string, unknown>,
  to: Record<string, unknown>,
): StatePatchOp[] {
  const ops: StatePatchOp[] = [];
  diffInto(from, to, [], ops);
  return ops;
}

function cloneJson<T>(value: T): T {
  return value === undefined ? value : (JSON.parse(JSON.stringify(value)) as T);
}

/** Own data properties only: a `__proto__` key (JSON.parse makes them) stays a plain key. */
function put(target: Record<string, Json> | Json[], key: string, value: Json): void {
  Object.defineProperty(target, key, {
    value,
    writable: true,
    enumerable: true,
    configurable: true,
  });
}

/** Applies `ops` to `state` in place (it is the caller's own copy) and returns it. */
export function applyPatch(
  state: Record<string, unknown>,
  ops: readonly StatePatchOp[],
): Record<string, unknown> {
  let root: Json = state;
  for (const op of ops) {
    const [path] = op;
    if (op.length === 4) {
      let array = root as Json;
      for (const key of path) array = (array as Record<string, Json>)[key];
      (array as Json[]).splice(op[1], op[2], ...cloneJson(op[3]));
      continue;
    }
    if (path.length === 0) {
      root = op.length === 2 ? cloneJson(op[1]) : {};
      continue;
    }
    let target = root as Record<string, Json>;
    for (const key of path.slice(0, -1)) target = target[key] as Record<string, Json>;
    const last = path[path.length - 1];
    if (op.length === 1) delete target[last];
    else if (Array.isArray(target) && last === 'length') target.length = op[1] as number;
    else put(target, last, cloneJson(op[1]));
  }
  return root as Record<string, unknown>;
}

/** The whole state a record stands for: its keyframe's copy with the patches after it. */
export function resolveRecord(
  records: ScriptStateTables['scriptStateRecords'],
  id: string,
): Record<string, unknown> {
  const chain: ScriptStateRecord[] = [];
  let record: ScriptStateRecord | undefined = records[id];
  while (record && record.prev !== null) {
    chain.push(record);
    record = records[record.prev];
  }
  // A missing keyframe cannot happen by construction; an empty state is what a script starts with.
  let state = cloneJson(record?.state ?? {});
  for (let i = chain.length - 1; i >= 0; i--) state = applyPatch(state, chain[i].patch ?? []);
  return state;
}

/**
 * The record for a script's new state, made from the record `prevId` (the state the script ran
 * with; null when it had none): a patch when that is worth it, else the whole state.
 */
export function newStateRecord(
  records: ScriptStateTables['scriptStateRecords'],
  prevId: string | null,
  state: Record<string, unknown>,
): ScriptStateRecord {
  const whole: ScriptStateRecord = { prev: null, chain: 0, state: cloneJson(state), patch: null };
  const prev = prevId === null ? undefined : records[prevId];
  if (!prev || prevId === null || prev.chain + 1 >= KEYFRAME_EVERY) return whole;
  const patch = diffState(resolveRecord(records, prevId), state);
  // A patch about the size of the state saves nothing and lengthens the chain.
  if (JSON.stringify(patch).length * 2 > JSON.stringify(state).length) return whole;
  return { prev: prevId, chain: prev.chain + 1, state: null, patch: cloneJson(patch) };
}
