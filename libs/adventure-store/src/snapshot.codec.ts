import type { StateEvent } from '@chronicle/narrative';
import {
  allNodes,
  emptyNodeTable,
  nodeBucket,
  nodeOf,
  pathEntry,
  type ActionNode,
  type AdventureState,
  type NodeType,
  type PathEntry,
} from '@chronicle/adventure';

// How a projection is kept in the snapshots table. A long adventure's projection is mostly its
// story tree: one object per action, each repeating its key names, plus a path that repeats the
// head's ancestors. Written as is, a 10,000-event adventure is a 3.7 MB snapshot that takes
// longer to parse than the fold it saves.
//
// The tree is written column by column: the ids, parents (as indexes), depths, token counts and
// text versions as flat arrays; node types and turn ids as indexes into small tables (a player
// action and its narration share a turn id, and there are only a handful of types). JSON.parse
// reads long arrays of numbers and short strings far faster than 10,000 twelve-field objects,
// and the decode builds each node as one literal. The path is left out: it is the head's
// ancestor chain, walked back on decode.
//
// Codec 3 (a 10,000-event adventure must load within 10 ms, see BENCHMARKS.md): the AI nodes' accepted state events were half of codec 2's
// bytes and most of its parse, one small array of small objects per narration, though the same
// few events (a move, a status) recur across thousands of narrations. Each distinct event is now
// written once, in `stateEvents`, and the blocks as three flat columns (which nodes, how many
// events each, which events), so the parse meets no per-node arrays at all. Nodes then share the
// event objects, which is safe for the reason a fold may share them with its log: nested values
// are replaced, never changed. Rejections, retcons and corrections are rare: sparse rows. The
// number columns are written as differences from the previous entry (a parent is almost always
// the node just before, text versions and turns climb by one or two), which keeps them to a
// digit or two, and the depths are left out when each is its parent's plus one, as the projector
// makes them: less text to inflate and to parse.
//
// Codec 4: the number columns were two fifths of codec 3's JSON and almost half of its parse
// (0.1 ms per 10,000-entry array, 0.8 ms in all), so they are no longer JSON. A snapshot is
// bytes: the codec, the length of a JSON header (the strings, the state outside the tree, the
// rare rows), then each number column as integers of the smallest width that holds all of its
// values (the differences fit a byte), which the decode reads in place through typed-array
// views. The table stores the bytes brotli-compressed (SnapshotRepository), so the fetch moves
// a twentieth of them.
//
// What a load still pays for is mostly the node table itself: adding 10,000 freshly parsed ids
// as keys of its buckets (each hashed and interned) is ~2 ms; JSON.parse building a record from keys
// measured slower, not faster.
//
// Codec 5: an AI node's `timedLore` (the cards whose timed effects its prompt started) rides in
// its extras row, as a fifth element when not empty.
//
// Decoding gives a state canonically equal to the one encoded (the replay check and a spec hold
// it to that); `codec` lets a later form tell its snapshots apart, and an older codec's snapshot
// reads as none (the projection is folded again and a new one written).

export const SNAPSHOT_CODEC = 5;

/**
 * [node index, rejected, retconned, corrections, timedLore?]: only for nodes where one is
 * non-empty (timedLore is left out when empty).
 */
type NodeExtras = [
  number,
  ActionNode['rejected'],
  ActionNode['retconned'],
  ActionNode['corrections'],
  ActionNode['timedLore']?,
];

/** The number columns, in the order they are written after the header. */
const COLUMNS = [
  'parents',
  'types',
  'tokens',
  'textVersions',
  'turns',
  'acceptedNodes',
  'acceptedCounts',
  'accepted',
] as const;
type Column = (typeof COLUMNS)[number];

/** A snapshot's content; number columns are arrays when encoding, typed-array views when read. */
export interface LeanSnapshot<Ints extends ArrayLike<number> = ArrayLike<number>> {
  state: Omit<AdventureState, 'nodes' | 'path'>;
  /** Node ids, by depth and then text version; every other node column is indexed like this one. */
  ids: string[];
  /** Node index minus its parent's index; 0 for none (a node is never its own parent). */
  parents: Ints;
  /** null when every depth is the parent's plus one (0 without a parent) and parents come first. */
  depths: number[] | null;
  /** Index into `typeNames`. */
  types: Ints;
  typeNames: NodeType[];
  tokens: Ints;
  /** Differences from the previous node's (the first from 0). */
  textVersions: Ints;
  /** Index into `turnIds` plus one (0 for none), as differences from the previous node's. */
  turns: Ints;
  turnIds: string[];
  /** Indexes of the erased nodes. */
  erased: number[];
  /** Each distinct accepted state event once. */
  stateEvents: StateEvent[];
  /** Indexes of the nodes whose accepted block is not empty, as differences from the previous. */
  acceptedNodes: Ints;
  /** The length of each of those blocks. */
  acceptedCounts: Ints;
  /** The blocks one after another, as indexes into `stateEvents`. */
  accepted: Ints;
  extras: NodeExtras[];
  /** Only when the path is not the head's ancestor chain (never, for a state the projector made). */
  path: PathEntry[] | null;
}

/** The JSON part of a snapshot: everything but the number columns, and how those are laid out. */
type Header = Omit<LeanSnapshot, Column> & {
  /** Bytes per value of each column (1, 2 or 4), in the order of COLUMNS. */
  widths: number[];
  /** Values in each column, in the order of COLUMNS. */
  lengths: number[];
};

// Bytes 0–3 hold the codec and 4–7 the header's length, in the machine's byte order (as the
// typed arrays are): a snapshot written with the other byte order reads as another codec, so as
// none. Every column starts at a multiple of 4, as a view of 2- or 4-byte integers must.
const PREFIX_BYTES = 8;
const ALIGN = 4;

/** The bytes the snapshots table keeps for `state` (see `decodeSnapshot`). */
export function encodeSnapshot(state: AdventureState): Uint8Array {
  const lean = toColumns(state);
  const columns = COLUMNS.map((name) => packedInts(lean[name], name));
  const { state: rest, ids, depths, typeNames, turnIds, erased, stateEvents, extras, path } = lean;
  const header: Header = {
    state: rest,
    ids,
    depths,
    typeNames,
    turnIds,
    erased,
    stateEvents,
    extras,
    path,
    widths: columns.map((column) => column.BYTES_PER_ELEMENT),
    lengths: columns.map((column) => column.length),
  };
  const json = Buffer.from(JSON.stringify(header), 'utf8');
  let size = aligned(PREFIX_BYTES + json.length);
  const offsets = columns.map((column) => {
    const offset = size;
    size = aligned(size + column.byteLength);
    return offset;
  });
  const bytes = new Uint8Array(size);
  new Uint32Array(bytes.buffer, 0, 2).set([SNAPSHOT_CODEC, json.length]);
  bytes.set(json, PREFIX_BYTES);
  columns.forEach((column, at) => {
    bytes.set(new Uint8Array(column.buffer, column.byteOffset, column.byteLength), offsets[at]);
  });
  return bytes;
}

/** The content of `bytes` with its columns as views; null when they are not of this codec. */
export function unpackSnapshot(bytes: Uint8Array): LeanSnapshot | null {
  if (bytes.byteLength < PREFIX_BYTES) return null;
  // The views need a start at a multiple of 4 in their buffer; misaligned bytes are copied (with
  // the constructor: a Buffer's slice() is a view, not a copy).
  const own = bytes.byteOffset % ALIGN === 0 ? bytes : new Uint8Array(bytes);
  const [codec, headerLength] = new Uint32Array(own.buffer, own.byteOffset, 2);
  if (codec !== SNAPSHOT_CODEC) return null;
  const json = Buffer.from(own.buffer as ArrayBuffer, own.byteOffset + PREFIX_BYTES, headerLength);
  const { widths, lengths, ...header } = JSON.parse(json.toString('utf8')) as Header;
  const lean = header as LeanSnapshot;
  let offset = aligned(PREFIX_BYTES + headerLength);
  COLUMNS.forEach((name, at) => {
    const start = own.byteOffset + offset;
    const width = widths[at];
    lean[name] =
      width === 1
        ? new Int8Array(own.buffer, start, lengths[at])
        : width === 2
          ? new Int16Array(own.buffer, start, lengths[at])
          : new Int32Array(own.buffer, start, lengths[at]);
    offset = aligned(offset + lengths[at] * width);
  });
  return lean;
}

function aligned(offset: number): number {
  return Math.ceil(offset / ALIGN) * ALIGN;
}

/** `values` in the narrowest signed integers that hold every one of them. */
function packedInts(values: number[], column: Column): Int8Array | Int16Array | Int32Array {
  let min = 0;
  let max = 0;
  for (const value of values) {
    if (!Number.isInteger(value) || value < -0x8000_0000 || value > 0x7fff_ffff) {
      throw new Error(`snapshot: ${column} holds ${value}, not a 32-bit integer`);
    }
    if (value < min) min = value;
    else if (value > max) max = value;
  }
  const ints =
    min >= -0x80 && max <= 0x7f
      ? new Int8Array(values.length)
      : min >= -0x8000 && max <= 0x7fff
        ? new Int16Array(values.length)
        : new Int32Array(values.length);
  ints.set(values);
  return ints;
}

// eslint-disable-next-line max-lines-per-function -- one loop fills every column in a single walk of the nodes (the encode's cost at 10,000 nodes); the columns are listed beside each other to match `fromColumns`
function toColumns(state: AdventureState): LeanSnapshot<number[]> {
  const { nodes: table, path, ...rest } = state;
  // Parents before their children, and neighbours in the story next to each other: what keeps
  // the parent and text-version differences to a digit or two (the buckets hold no such order).
  const nodes = [...allNodes(state)].sort(
    (a, b) => a.depth - b.depth || a.textVersion - b.textVersion || (a.id < b.id ? -1 : 1),
  );
  const ids = nodes.map((node) => node.id);
  const indexOf = new Map<string, number>();
  for (let index = 0; index < ids.length; index++) indexOf.set(ids[index], index);
  const typeIndex = new Map<NodeType, number>();
  const turnIndex = new Map<string, number>();
  // Keyed by the event's JSON (`eventKey`): two equal events written with their keys in another
  // order are kept twice, which costs a few bytes and changes nothing.
  const eventIndex = new Map<string, number>();
  const depths: number[] = [];
  let derivedDepths = true;
  let lastTextVersion = 0;
  let lastTurn = 0;
  let lastAccepted = 0;
  const lean: LeanSnapshot<number[]> = {
    state: rest,
    ids,
    parents: [],
    depths: null,
    types: [],
    typeNames: [],
    tokens: [],
    textVersions: [],
    turns: [],
    turnIds: [],
    erased: [],
    stateEvents: [],
    acceptedNodes: [],
    acceptedCounts: [],
    accepted: [],
    extras: [],
    path: null,
  };
  for (let index = 0; index < ids.length; index++) {
    const node = nodes[index];
    let parent = -1;
    if (node.parentId !== null) {
      // The projector refuses an action whose parent is unknown, so this only guards hand-made states.
      const found = indexOf.get(node.parentId);
      if (found === undefined) {
        throw new Error('snapshot: a node names a parent that is not in the tree');
      }
      parent = found;
    }
    let type = typeIndex.get(node.type);
    if (type === undefined) {
      type = lean.typeNames.push(node.type) - 1;
      typeIndex.set(node.type, type);
    }
    let turn = -1;
    if (node.turnId !== null) {
      const known = turnIndex.get(node.turnId);
      if (known === undefined) {
        turn = lean.turnIds.push(node.turnId) - 1;
        turnIndex.set(node.turnId, turn);
      } else {
        turn = known;
      }
    }
    lean.parents.push(parent < 0 ? 0 : index - parent);
    depths.push(node.depth);
    derivedDepths &&=
      parent < 0 ? node.depth === 0 : parent < index && node.depth === depths[parent] + 1;
    lean.types.push(type);
    lean.tokens.push(node.tokens);
    lean.textVersions.push(node.textVersion - lastTextVersion);
    lastTextVersion = node.textVersion;
    lean.turns.push(turn + 1 - lastTurn);
    lastTurn = turn + 1;
    if (node.erased) lean.erased.push(index);
    if (node.accepted.length > 0) {
      lean.acceptedNodes.push(index - lastAccepted);
      lastAccepted = index;
      lean.acceptedCounts.push(node.accepted.length);
      for (const event of node.accepted) {
        const key = eventKey(event);
        let at = eventIndex.get(key);
        if (at === undefined) {
          at = lean.stateEvents.push(event) - 1;
          eventIndex.set(key, at);
        }
        lean.accepted.push(at);
      }
    }
    if (
      node.rejected.length > 0 ||
      node.retconned.length > 0 ||
      node.corrections.length > 0 ||
      node.timedLore.length > 0
    ) {
      const row: NodeExtras = [index, node.rejected, node.retconned, node.corrections];
      if (node.timedLore.length > 0) row.push(node.timedLore);
      lean.extras.push(row);
    }
  }
  lean.depths = derivedDepths ? null : depths;
  lean.path = samePath(pathOf({ nodes: table }, state.head), path) ? null : path;
  return lean;
}

// Keyed by the event's JSON, which was most of an encode. The same event objects stay in the
// projection from one snapshot to the next (nested values are replaced, never changed), so a key
// is made once per object: a later snapshot of the adventure keys only its newest events.
const eventKeys = new WeakMap<StateEvent, string>();

function eventKey(event: StateEvent): string {
  let key = eventKeys.get(event);
  if (key === undefined) {
    key = JSON.stringify(event);
    eventKeys.set(event, key);
  }
  return key;
}

const NONE: never[] = Object.freeze([]) as unknown as never[];

/** The state `encodeSnapshot` was given; null when `bytes` are not a snapshot of this codec. */
export function decodeSnapshot(bytes: Uint8Array): AdventureState | null {
  const lean = unpackSnapshot(bytes);
  if (!lean) return null;
  const {
    ids,
    parents,
    depths,
    types,
    typeNames,
    tokens,
    textVersions,
    turns,
    turnIds,
    stateEvents,
    acceptedNodes,
    acceptedCounts,
    accepted,
  } = lean;
  // Most nodes have none of the four lists, and four fresh empty arrays per node were a third of
  // the decode's allocations (a young-generation collection copies every one of them while the
  // tree is being built). They share one frozen empty array instead: nested values are replaced,
  // never changed, and should anything ever push onto one, it throws instead of leaking into
  // other nodes. A node with a list gets its own array.
  const built: ActionNode[] = new Array<ActionNode>(ids.length);
  const parentIndexes = new Int32Array(ids.length);
  const nodes = emptyNodeTable();
  let textVersion = 0;
  let turn = 0;
  for (let index = 0; index < ids.length; index++) {
    const parent = parents[index] === 0 ? -1 : index - parents[index];
    parentIndexes[index] = parent;
    textVersion += textVersions[index];
    turn += turns[index];
    const node: ActionNode = {
      id: ids[index],
      parentId: parent < 0 ? null : ids[parent],
      depth: depths ? depths[index] : parent < 0 ? 0 : built[parent].depth + 1,
      type: typeNames[types[index]],
      tokens: tokens[index],
      textVersion,
      erased: false,
      turnId: turn === 0 ? null : turnIds[turn - 1],
      accepted: NONE,
      rejected: NONE,
      retconned: NONE,
      corrections: NONE,
      timedLore: NONE,
    };
    built[index] = node;
    nodes[nodeBucket(node.id)][node.id] = node;
  }
  for (const index of lean.erased) built[index].erased = true;
  let next = 0;
  let owner = 0;
  for (let row = 0; row < acceptedNodes.length; row++) {
    owner += acceptedNodes[row];
    const count = acceptedCounts[row];
    const block = new Array<StateEvent>(count);
    for (let at = 0; at < count; at++) block[at] = stateEvents[accepted[next++]];
    built[owner].accepted = block;
  }
  for (const [index, rejected, retconned, corrections, timedLore] of lean.extras) {
    const node = built[index];
    node.rejected = rejected;
    node.retconned = retconned;
    node.corrections = corrections;
    if (timedLore) node.timedLore = timedLore;
  }
  const path = lean.path ?? pathByIndex(built, parentIndexes, lean.state.head);
  return { ...lean.state, nodes, path } as AdventureState;
}

/**
 * `pathOf` for the decode: the walk follows parent indexes instead of looking 10,000 ids up in
 * the node table, and fills an array of the right length from the end instead of reversing.
 */
function pathByIndex(
  built: ActionNode[],
  parentIndexes: Int32Array,
  head: string | null,
): PathEntry[] {
  // The head is almost always one of the last nodes written.
  const headIndex = head === null ? -1 : built.findLastIndex((node) => node.id === head);
  let length = 0;
  for (let at = headIndex; at >= 0; at = parentIndexes[at]) length++;
  const path = new Array<PathEntry>(length);
  for (let at = headIndex, depth = length - 1; at >= 0; at = parentIndexes[at], depth--) {
    path[depth] = pathEntry(built[at]);
  }
  return path;
}

function pathOf(state: Pick<AdventureState, 'nodes'>, head: string | null): PathEntry[] {
  const path: PathEntry[] = [];
  let node = head === null ? undefined : nodeOf(state, head);
  while (node) {
    path.push(pathEntry(node));
    node = node.parentId === null ? undefined : nodeOf(state, node.parentId);
  }
  return path.reverse();
}

function samePath(a: PathEntry[], b: PathEntry[]): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) {
    const x = a[i];
    const y = b[i];
    if (
      x.id !== y.id ||
      x.type !== y.type ||
      x.tokens !== y.tokens ||
      x.textVersion !== y.textVersion ||
      x.turnId !== y.turnId ||
      x.erased !== y.erased
    ) {
      return false;
    }
  }
  return true;
}
