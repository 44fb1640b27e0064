/**
 * Groups a week's questions into topics: centroid-based leader clustering by
 * cosine similarity, one reassignment pass (so the first question seen does not
 * decide a topic alone), then agglomerative merging of topics whose centroids
 * are still closer than the threshold. Deterministic for a given input order.
 *
 * The work is quadratic in the number of topics, so it yields to the event loop
 * every few milliseconds' worth of arithmetic: a large week never stalls gRPC
 * calls, health checks or the event consumer of the same process.
 */

export interface ClusterInput {
  text: string;
  vector: ArrayLike<number>;
  /** How many tickets asked exactly this (identical texts are embedded once). */
  weight: number;
}

export interface Topic {
  /** The representative question: closest to the centroid, shortest on ties. */
  label: string;
  /** Indexes into the input, in input order. */
  members: number[];
  /** Sum of the members' weights: the number of tickets. */
  size: number;
}

/** Beyond this many leader clusters the quadratic merge pass is skipped. */
const MERGE_PASS_MAX_CLUSTERS = 1_000;
const TIE_EPSILON = 1e-9;
/** Multiply-adds between two yields to the event loop (roughly 10 ms). */
const WORK_PER_SLICE = 10_000_000;

/** Counts arithmetic and yields to the event loop once a slice is used up. */
class Pacer {
  private work = 0;
  async spend(units: number): Promise<void> {
    this.work += units;
    if (this.work >= WORK_PER_SLICE) {
      this.work = 0;
      await new Promise((resolve) => setImmediate(resolve));
    }
  }
}

interface Cluster {
  members: number[];
  sum: Float64Array;
  weight: number;
  /** Unit-length centroid (zero when every member is the zero vector). */
  unit: Float64Array;
}

export async function clusterTopics(items: ClusterInput[], threshold: number): Promise<Topic[]> {
  if (items.length === 0) return [];
  const dims = items[0]!.vector.length;
  const vectors = items.map((item) => toUnit(item.vector, dims));
  const pacer = new Pacer();

  // 1. Leader pass.
  let clusters: Cluster[] = [];
  for (let i = 0; i < vectors.length; i++) {
    const v = vectors[i]!;
    const { index, similarity } = nearest(clusters, v);
    if (index >= 0 && similarity >= threshold) addMember(clusters[index]!, i, v, items[i]!.weight);
    else clusters.push(newCluster(i, v, items[i]!.weight));
    await pacer.spend(clusters.length * dims);
  }

  // 2. Reassignment: every question moves to its nearest final centroid.
  const centroids = clusters.map((c) => c.unit);
  const assigned: Cluster[] = [];
  const byCentroid = new Map<number, Cluster>();
  for (let i = 0; i < vectors.length; i++) {
    const v = vectors[i]!;
    await pacer.spend(centroids.length * dims);
    let best = -1;
    let bestSim = -Infinity;
    centroids.forEach((c, j) => {
      const s = dot(c, v);
      if (s > bestSim + TIE_EPSILON) {
        best = j;
        bestSim = s;
      }
    });
    if (best < 0 || bestSim < threshold) {
      assigned.push(newCluster(i, v, items[i]!.weight));
      continue;
    }
    const existing = byCentroid.get(best);
    if (existing) addMember(existing, i, v, items[i]!.weight);
    else {
      const created = newCluster(i, v, items[i]!.weight);
      byCentroid.set(best, created);
      assigned.push(created);
    }
  }
  clusters = assigned;

  // 3. Merge topics whose centroids are within the threshold, most similar pair first.
  if (clusters.length <= MERGE_PASS_MAX_CLUSTERS)
    clusters = await mergeClose(clusters, threshold, pacer);

  const topics = clusters.map((c) => toTopic(c, items, vectors));
  return topics.sort(
    (a, b) => b.size - a.size || compareText(a.label, b.label) || a.members[0]! - b.members[0]!,
  );
}

async function mergeClose(
  clusters: Cluster[],
  threshold: number,
  pacer: Pacer,
): Promise<Cluster[]> {
  const alive = clusters.map(() => true);
  const sim: Float64Array[] = clusters.map(() => new Float64Array(clusters.length));
  const dims = clusters[0]?.sum.length ?? 0;
  for (let a = 0; a < clusters.length; a++) {
    await pacer.spend((clusters.length - a) * dims);
    for (let b = a + 1; b < clusters.length; b++) {
      const s = dot(clusters[a]!.unit, clusters[b]!.unit);
      sim[a]![b] = s;
      sim[b]![a] = s;
    }
  }
  for (;;) {
    await pacer.spend(clusters.length * clusters.length);
    let bestA = -1;
    let bestB = -1;
    let best = -Infinity;
    for (let a = 0; a < clusters.length; a++) {
      if (!alive[a]) continue;
      for (let b = a + 1; b < clusters.length; b++) {
        if (!alive[b]) continue;
        const s = sim[a]![b]!;
        if (s > best + TIE_EPSILON) {
          best = s;
          bestA = a;
          bestB = b;
        }
      }
    }
    if (bestA < 0 || best < threshold) break;
    const into = clusters[bestA]!;
    const from = clusters[bestB]!;
    into.members = [...into.members, ...from.members].sort((x, y) => x - y);
    for (let d = 0; d < into.sum.length; d++) into.sum[d]! += from.sum[d]!;
    into.weight += from.weight;
    into.unit = unitOf(into.sum);
    alive[bestB] = false;
    await pacer.spend(clusters.length * dims);
    for (let c = 0; c < clusters.length; c++) {
      if (!alive[c] || c === bestA) continue;
      const s = dot(into.unit, clusters[c]!.unit);
      sim[bestA]![c] = s;
      sim[c]![bestA] = s;
    }
  }
  return clusters.filter((_, i) => alive[i]);
}

function toTopic(cluster: Cluster, items: ClusterInput[], vectors: Float64Array[]): Topic {
  let label = -1;
  let bestSim = -Infinity;
  for (const m of cluster.members) {
    const s = dot(cluster.unit, vectors[m]!);
    const text = items[m]!.text;
    if (
      label < 0 ||
      s > bestSim + TIE_EPSILON ||
      (Math.abs(s - bestSim) <= TIE_EPSILON && codePoints(text) < codePoints(items[label]!.text))
    ) {
      label = m;
      bestSim = Math.max(s, bestSim);
    }
  }
  return { label: items[label]!.text, members: cluster.members, size: cluster.weight };
}

function newCluster(index: number, v: Float64Array, weight: number): Cluster {
  const sum = new Float64Array(v.length);
  const cluster: Cluster = { members: [], sum, weight: 0, unit: sum };
  addMember(cluster, index, v, weight);
  return cluster;
}

function addMember(cluster: Cluster, index: number, v: Float64Array, weight: number): void {
  cluster.members.push(index);
  for (let d = 0; d < v.length; d++) cluster.sum[d]! += weight * v[d]!;
  cluster.weight += weight;
  cluster.unit = unitOf(cluster.sum);
}

function nearest(clusters: Cluster[], v: Float64Array): { index: number; similarity: number } {
  let index = -1;
  let similarity = -Infinity;
  clusters.forEach((c, i) => {
    const s = dot(c.unit, v);
    if (s > similarity + TIE_EPSILON) {
      index = i;
      similarity = s;
    }
  });
  return { index, similarity };
}

function toUnit(vector: ArrayLike<number>, dims: number): Float64Array {
  if (vector.length !== dims)
    throw new Error(`vector has ${vector.length} dimensions, expected ${dims}`);
  return unitOf(Float64Array.from(vector));
}

function unitOf(v: Float64Array): Float64Array {
  let norm = 0;
  for (let d = 0; d < v.length; d++) norm += v[d]! * v[d]!;
  const out = new Float64Array(v.length);
  if (norm === 0) return out;
  const inv = 1 / Math.sqrt(norm);
  for (let d = 0; d < v.length; d++) out[d] = v[d]! * inv;
  return out;
}

export function dot(a: ArrayLike<number>, b: ArrayLike<number>): number {
  let s = 0;
  for (let d = 0; d < a.length; d++) s += a[d]! * b[d]!;
  return s;
}

function codePoints(text: string): number {
  let n = 0;
  for (const _ of text) n++;
  return n;
}

function compareText(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
