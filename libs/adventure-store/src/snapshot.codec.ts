import type { ActionNode, AdventureState, NodeType, PathEntry } from '@chronicle/adventure';

// How a projection is kept in the snapshots table. A long adventure's projection is mostly its
// story tree: one object per action, each repeating its key names, plus a path that repeats the
// head's ancestors. Written as is, a 10,000-event adventure is a 3.7 MB snapshot that takes
// longer to parse than the fold it saves.
//
// Codec 2 writes the tree column by column: the ids, parents (as indexes), depths, token counts
// and text versions as flat arrays; node types and turn ids as indexes into small tables (a
// player action and its narration share a turn id, and there are only a handful of types); and
// only the nodes whose state block, retcons or corrections are not empty as sparse rows. JSON.parse
// reads long arrays of numbers and short strings far faster than 10,000 twelve-field tuples, and
// the decode builds each node as one literal. Codec 1's tuples cost ~6 ms to parse plus ~10 ms to
// decode for a 10,000-event adventure; this form is about a third of that (see the replay bench).
// The path is left out: it is the head's ancestor chain, walked back on decode.
//
// Decoding gives a state canonically equal to the one encoded (the replay check and a spec hold
// it to that); `codec` lets a later form tell its snapshots apart, and an older codec's snapshot
// reads as none (the projection is folded again and a new one written).

export const SNAPSHOT_CODEC = 2;

/** [node index, accepted, rejected, retconned, corrections]: only for nodes where one is non-empty. */
type NodeExtras = [
  number,
  ActionNode['accepted'],
  ActionNode['rejected'],
  ActionNode['retconned'],
  ActionNode['corrections'],
];

export interface LeanSnapshot {
  codec: typeof SNAPSHOT_CODEC;
  state: Omit<AdventureState, 'nodes' | 'path'>;
  /** Node ids in the order of `state.nodes`' keys; every other column is indexed like this one. */
  ids: string[];
  /** Index of the parent in `ids`; -1 for the opening. */
  parents: number[];
  depths: number[];
  /** Index into `typeNames`. */
  types: number[];
  typeNames: NodeType[];
  tokens: number[];
  textVersions: number[];
  /** Index into `turnIds`; -1 for none. */
  turns: number[];
  turnIds: string[];
  /** Indexes of the erased nodes. */
  erased: number[];
  extras: NodeExtras[];
  /** Only when the path is not the head's ancestor chain (never, for a state the projector made). */
  path: PathEntry[] | null;
}

export function encodeSnapshot(state: AdventureState): LeanSnapshot {
  const { nodes, path, ...rest } = state;
  const ids = Object.keys(nodes);
  const indexOf = new Map<string, number>();
  for (let index = 0; index < ids.length; index++) indexOf.set(ids[index], index);
  const typeIndex = new Map<NodeType, number>();
  const turnIndex = new Map<string, number>();
  const lean: LeanSnapshot = {
    codec: SNAPSHOT_CODEC,
    state: rest,
    ids,
    parents: [],
    depths: [],
    types: [],
    typeNames: [],
    tokens: [],
    textVersions: [],
    turns: [],
    turnIds: [],
    erased: [],
    extras: [],
    path: null,
  };
  for (let index = 0; index < ids.length; index++) {
    const node = nodes[ids[index]];
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
    lean.parents.push(parent);
    lean.depths.push(node.depth);
    lean.types.push(type);
    lean.tokens.push(node.tokens);
    lean.textVersions.push(node.textVersion);
    lean.turns.push(turn);
    if (node.erased) lean.erased.push(index);
    if (
      node.accepted.length > 0 ||
      node.rejected.length > 0 ||
      node.retconned.length > 0 ||
      node.corrections.length > 0
    ) {
      lean.extras.push([index, node.accepted, node.rejected, node.retconned, node.corrections]);
    }
  }
  lean.path = samePath(pathOf(nodes, state.head), path) ? null : path;
  return lean;
}

/** The state `encodeSnapshot` was given; null when `stored` is not a lean snapshot of this codec. */
export function decodeSnapshot(stored: unknown): AdventureState | null {
  const lean = stored as Partial<LeanSnapshot> | null;
  if (!lean || lean.codec !== SNAPSHOT_CODEC || !lean.state || !Array.isArray(lean.ids)) {
    return null;
  }
  const { ids, parents, depths, types, typeNames, tokens, textVersions, turns, turnIds } =
    lean as LeanSnapshot;
  // Every node gets its own arrays, as the projector gives them: a caller may hold the state, and
  // nested values are replaced, never changed, but sharing one array between nodes is a trap.
  const built: ActionNode[] = new Array<ActionNode>(ids.length);
  const nodes: Record<string, ActionNode> = {};
  for (let index = 0; index < ids.length; index++) {
    const parent = parents[index];
    const turn = turns[index];
    const node: ActionNode = {
      id: ids[index],
      parentId: parent < 0 ? null : ids[parent],
      depth: depths[index],
      type: typeNames[types[index]],
      tokens: tokens[index],
      textVersion: textVersions[index],
      erased: false,
      turnId: turn < 0 ? null : turnIds[turn],
      accepted: [],
      rejected: [],
      retconned: [],
      corrections: [],
    };
    built[index] = node;
    nodes[node.id] = node;
  }
  for (const index of lean.erased ?? []) built[index].erased = true;
  for (const [index, accepted, rejected, retconned, corrections] of lean.extras ?? []) {
    const node = built[index];
    node.accepted = accepted;
    node.rejected = rejected;
    node.retconned = retconned;
    node.corrections = corrections;
  }
  const path = lean.path ?? pathOf(nodes, lean.state.head ?? null);
  return { ...lean.state, nodes, path } as AdventureState;
}

function pathOf(nodes: Record<string, ActionNode>, head: string | null): PathEntry[] {
  const path: PathEntry[] = [];
  let node = head === null ? undefined : nodes[head];
  while (node) {
    path.push({
      id: node.id,
      type: node.type,
      tokens: node.tokens,
      textVersion: node.textVersion,
      turnId: node.turnId,
      erased: node.erased,
    });
    node = node.parentId === null ? undefined : nodes[node.parentId];
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
