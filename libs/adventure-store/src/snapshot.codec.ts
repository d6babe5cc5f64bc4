import type { ActionNode, AdventureState, NodeType, PathEntry } from '@chronicle/adventure';

// How a projection is kept in the snapshots table. A long adventure's projection is mostly its
// story tree: one object per action, each repeating its key names, plus a path that repeats the
// head's ancestors. Written as is, a 10,000-event adventure is a 3.7 MB snapshot that takes
// longer to parse than the fold it saves. The lean form writes each node as a tuple (parent as
// an index instead of an id) and leaves the path out: it is the head's ancestor chain, walked
// back on decode. Decoding gives a state that is canonically equal to the one encoded (the
// replay check and a spec hold it to that); `codec` lets a later form tell its snapshots apart.

export const SNAPSHOT_CODEC = 1;

/**
 * id, parent index (-1 for the opening), depth, type, tokens, textVersion, erased (0/1), turnId,
 * accepted, rejected, retconned, corrections.
 */
type NodeTuple = [
  string,
  number,
  number,
  NodeType,
  number,
  number,
  0 | 1,
  string | null,
  ActionNode['accepted'],
  ActionNode['rejected'],
  ActionNode['retconned'],
  ActionNode['corrections'],
];

export interface LeanSnapshot {
  codec: typeof SNAPSHOT_CODEC;
  state: Omit<AdventureState, 'nodes' | 'path'>;
  nodes: NodeTuple[];
  /** Only when the path is not the head's ancestor chain (never, for a state the projector made). */
  path: PathEntry[] | null;
}

export function encodeSnapshot(state: AdventureState): LeanSnapshot {
  const { nodes, path, ...rest } = state;
  const ids = Object.keys(nodes);
  const indexOf = new Map(ids.map((id, index) => [id, index]));
  const tuples = ids.map((id): NodeTuple => {
    const node = nodes[id];
    return [
      node.id,
      node.parentId === null ? -1 : (indexOf.get(node.parentId) ?? -1),
      node.depth,
      node.type,
      node.tokens,
      node.textVersion,
      node.erased ? 1 : 0,
      node.turnId,
      node.accepted,
      node.rejected,
      node.retconned,
      node.corrections,
    ];
  });
  // The projector refuses an action whose parent is unknown, so this only guards hand-made states.
  const parentsKnown = ids.every((id) => {
    const parentId = nodes[id].parentId;
    return parentId === null || indexOf.has(parentId);
  });
  if (!parentsKnown) throw new Error('snapshot: a node names a parent that is not in the tree');
  const derived = pathOf(nodes, state.head);
  return {
    codec: SNAPSHOT_CODEC,
    state: rest,
    nodes: tuples,
    path: samePath(derived, path) ? null : path,
  };
}

/** The state `encodeSnapshot` was given; null when `stored` is not a lean snapshot of this codec. */
export function decodeSnapshot(stored: unknown): AdventureState | null {
  const lean = stored as Partial<LeanSnapshot> | null;
  if (!lean || lean.codec !== SNAPSHOT_CODEC || !Array.isArray(lean.nodes) || !lean.state) {
    return null;
  }
  const tuples = lean.nodes;
  const nodes: Record<string, ActionNode> = {};
  for (const t of tuples) {
    nodes[t[0]] = {
      id: t[0],
      parentId: t[1] < 0 ? null : tuples[t[1]][0],
      depth: t[2],
      type: t[3],
      tokens: t[4],
      textVersion: t[5],
      erased: t[6] === 1,
      turnId: t[7],
      accepted: t[8],
      rejected: t[9],
      retconned: t[10],
      corrections: t[11],
    };
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
