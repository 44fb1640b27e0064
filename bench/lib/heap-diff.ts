// Reads V8 heap snapshots (.heapsnapshot JSON) of one process taken a known interval apart and
// tells what keeps the objects that outlive a request alive: the objects that were allocated
// between snapshot 1 and 2 and are still alive in snapshot 3 (they lived long enough for a
// scavenge to copy them twice, i.e. to promote them) are grouped by their *boundary*, the
// object older than snapshot 1 on their shortest path from the roots and the edge from it into
// the new objects. Object ids are stable across the snapshots of one process (V8 tracks moves
// once the first snapshot is taken), which is what the Comparison view of DevTools uses too.
import { readFileSync } from 'node:fs';

interface Raw {
  snapshot: {
    meta: {
      node_fields: string[];
      node_types: [string[], ...unknown[]];
      edge_fields: string[];
      edge_types: [string[], ...unknown[]];
    };
  };
  nodes: number[];
  edges: number[];
  strings: string[];
}

export interface Snapshot {
  count: number;
  ids: Float64Array;
  /** Per node: its name (constructor for objects) and V8 type. */
  label(n: number): string;
  size: Float64Array;
  /** BFS parent on a shortest non-weak path from the root (-1 for the root), and the edge name. */
  parent: Int32Array;
  parentEdge: string[];
  /** Nodes in BFS order (parents before children); unreachable nodes are left out. */
  order: Int32Array;
}

export function readSnapshot(file: string): Snapshot {
  const raw = JSON.parse(readFileSync(file, 'utf8')) as Raw;
  const nf = raw.snapshot.meta.node_fields;
  const ef = raw.snapshot.meta.edge_fields;
  const nodeTypes = raw.snapshot.meta.node_types[0];
  const edgeTypes = raw.snapshot.meta.edge_types[0];
  const N = nf.length;
  const E = ef.length;
  const [iType, iName, iId, iSize, iEdges] = ['type', 'name', 'id', 'self_size', 'edge_count'].map(
    (f) => nf.indexOf(f),
  ) as [number, number, number, number, number];
  const [eType, eName, eTo] = ['type', 'name_or_index', 'to_node'].map((f) => ef.indexOf(f)) as [
    number,
    number,
    number,
  ];
  const count = raw.nodes.length / N;
  const ids = new Float64Array(count);
  const size = new Float64Array(count);
  const firstEdge = new Int32Array(count + 1);
  for (let n = 0, e = 0; n < count; n++) {
    ids[n] = raw.nodes[n * N + iId]!;
    size[n] = raw.nodes[n * N + iSize]!;
    firstEdge[n] = e;
    e += raw.nodes[n * N + iEdges]!;
    firstEdge[n + 1] = e;
  }
  const parent = new Int32Array(count).fill(-2);
  const parentEdge: string[] = new Array<string>(count);
  const order = new Int32Array(count);
  let head = 0;
  let tail = 0;
  parent[0] = -1;
  order[tail++] = 0;
  const weak = edgeTypes.indexOf('weak');
  while (head < tail) {
    const n = order[head++]!;
    for (let e = firstEdge[n]!; e < firstEdge[n + 1]!; e++) {
      const type = raw.edges[e * E + eType]!;
      if (type === weak) continue;
      const to = raw.edges[e * E + eTo]! / N;
      if (parent[to] !== -2) continue;
      parent[to] = n;
      const name = raw.edges[e * E + eName]!;
      const t = edgeTypes[type];
      parentEdge[to] = t === 'element' || t === 'hidden' ? `[${name}]` : raw.strings[name]!;
      order[tail++] = to;
    }
  }
  return {
    count,
    ids,
    size,
    parent,
    parentEdge,
    order: order.subarray(0, tail),
    label: (n) => {
      const type = nodeTypes[raw.nodes[n * N + iType]!]!;
      const name = raw.strings[raw.nodes[n * N + iName]!]!;
      return type === 'object' || type === 'native' || type === 'closure'
        ? `${name.slice(0, 60)}${type === 'closure' ? '()' : ''}`
        : `(${type})`;
    },
  };
}

export function idsOf(s: Snapshot): Set<number> {
  return new Set(s.ids);
}

export interface Boundary {
  key: string;
  count: number;
  bytes: number;
  /** A shortest path from the roots to the boundary, for orientation. */
  path: string;
}

/**
 * Groups the nodes of `mid` that `select` accepts by boundary: the nearest ancestor that is in
 * `old` (or the root), with the edge into the selected region.
 */
export function boundaries(
  mid: Snapshot,
  old: Set<number>,
  select: (n: number) => boolean,
  pathDepth = 8,
): Boundary[] {
  const boundaryOf = new Int32Array(mid.count).fill(-1);
  const groups = new Map<string, Boundary>();
  const keys: string[] = [];
  for (const n of mid.order) {
    const p = mid.parent[n]!;
    if (p < 0 || old.has(mid.ids[n]!)) continue;
    if (boundaryOf[p]! >= 0 && !old.has(mid.ids[p]!)) boundaryOf[n] = boundaryOf[p]!;
    else {
      keys.push(`${mid.label(p)} --${mid.parentEdge[n]}--> ${mid.label(n)}`);
      boundaryOf[n] = keys.length - 1;
      const key = keys[keys.length - 1]!;
      if (!groups.has(key))
        groups.set(key, { key, count: 0, bytes: 0, path: pathTo(mid, p, pathDepth) });
    }
    if (!select(n)) continue;
    const g = groups.get(keys[boundaryOf[n]!]!)!;
    g.count++;
    g.bytes += mid.size[n]!;
  }
  return [...groups.values()].filter((g) => g.count > 0).sort((a, b) => b.bytes - a.bytes);
}

/** The last `depth` steps of a shortest path from the roots to n. */
export function pathTo(s: Snapshot, n: number, depth: number): string {
  const steps: string[] = [];
  for (let m = n; m > 0 && steps.length < depth; m = s.parent[m]!)
    steps.unshift(`${s.parentEdge[m]} → ${s.label(m)}`);
  return steps.join(' · ');
}

/** Bytes and counts per label of the selected nodes, largest first. */
export function byLabel(
  s: Snapshot,
  select: (n: number) => boolean,
): Array<[string, number, number]> {
  const m = new Map<string, [number, number]>();
  for (const n of s.order) {
    if (!select(n)) continue;
    const k = s.label(n);
    const v = m.get(k) ?? [0, 0];
    v[0]++;
    v[1] += s.size[n]!;
    m.set(k, v);
  }
  return [...m.entries()]
    .map(([k, [c, b]]) => [k, c, b] as [string, number, number])
    .sort((a, b) => b[2] - a[2]);
}
