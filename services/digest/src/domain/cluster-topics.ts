/**
 * Groups a week's questions into topics: agglomerative clustering with weighted
 * average linkage (UPGMA). Two questions' similarity is their embedding cosine plus
 * KB_EVIDENCE_WEIGHT × the probability that the same KB topic answers both,
 * Σ_c s(q,c)·s(q',c) over their KB candidates (calibrated search scores): paraphrases
 * retrieve the same entries even when they share few words, and two questions that each
 * confidently match a different entry are kept apart even when they share many. Merging
 * stops below the threshold.
 *
 * Both terms are dot products, so average linkage between two groups is a dot product of
 * the groups' weighted sums: each group keeps only its sums and a merge costs one pass
 * over the other groups. The work is quadratic in the number of groups; it yields to the
 * event loop every few milliseconds' worth of arithmetic, so a large week never stalls
 * gRPC calls or the event consumer of the same process.
 */

export interface ClusterItem {
  vector: ArrayLike<number>;
  /** Score of each KB topic the question retrieved (empty when none or not searched). */
  profile: ReadonlyMap<string, number>;
  /** How many tickets asked exactly this (identical texts are one item). */
  weight: number;
}

export interface ClusterOptions {
  /** Average-linkage similarity at or above which two groups merge. */
  threshold: number;
  /** Weight of the shared-KB-answer probability next to the embedding cosine (0 = embeddings only). */
  kbWeight: number;
}

export interface Topic {
  /** Item indexes, ascending. */
  members: number[];
  /** Sum of the members' weights: the number of tickets. */
  size: number;
}

/**
 * Weight of the shared-KB-answer probability: on the StackFAQ dev weeks 1.4–3 (with the
 * threshold moved along) gave the same grouping; 2 is the middle of that plateau.
 */
export const KB_EVIDENCE_WEIGHT = 2;
/** Groups clustered with the full similarity matrix; larger weeks are pre-grouped first. */
export const MAX_AGGLOMERATIVE_GROUPS = 2_000;
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

interface Group {
  members: number[];
  weight: number;
  /** Σ weight · unit embedding. */
  vector: Float64Array;
  /** Σ weight · KB candidate scores. */
  profile: Map<string, number>;
  /** Indexes of the non-zero dimensions of `vector` (hashed embeddings are mostly zeros). */
  nonzero: Int32Array | undefined;
}

export async function clusterTopics(
  items: ClusterItem[],
  options: ClusterOptions,
): Promise<Topic[]> {
  if (items.length === 0) return [];
  const dims = items[0]!.vector.length;
  const pacer = new Pacer();
  const link = linkage(options.kbWeight);

  const groups: Group[] = items.map((item, i) => ({
    members: [i],
    weight: item.weight,
    vector: toUnit(item.vector, dims).map((x) => x * item.weight),
    profile: new Map([...item.profile].map(([key, s]) => [key, s * item.weight])),
    nonzero: undefined,
  }));
  let clustered = groups;
  if (groups.length > MAX_AGGLOMERATIVE_GROUPS) {
    clustered = await leaderPass(groups, options.threshold, link, pacer);
  }
  const merged = await agglomerate(
    clustered.slice(0, MAX_AGGLOMERATIVE_GROUPS),
    options.threshold,
    link,
    pacer,
  );
  const all = [...merged, ...clustered.slice(MAX_AGGLOMERATIVE_GROUPS)];

  return all.map(toTopic).sort((a, b) => b.size - a.size || a.members[0]! - b.members[0]!);
}

type Link = (a: Group, b: Group) => number;

/**
 * Weighted average of the pairwise similarities between two groups' members, where a
 * pair's similarity is cos(embeddings) + kbWeight · Σ_c s(q,c)·s(q',c). As sums:
 * [E_a·E_b + kbWeight · P_a·P_b] / (W_a·W_b).
 */
function linkage(kbWeight: number): Link {
  return (a, b) => {
    let s = sparseVectorDot(a, b);
    if (kbWeight > 0 && a.profile.size > 0 && b.profile.size > 0)
      s += kbWeight * sparseDot(a.profile, b.profile);
    return s / (a.weight * b.weight);
  };
}

async function agglomerate(
  groups: Group[],
  threshold: number,
  link: Link,
  pacer: Pacer,
): Promise<Group[]> {
  const n = groups.length;
  if (n < 2) return groups;
  const dims = groups[0]!.vector.length;
  const sim = new Float64Array(n * n).fill(-Infinity);
  for (let a = 0; a < n; a++) {
    await pacer.spend((n - a) * dims);
    for (let b = a + 1; b < n; b++) {
      const s = link(groups[a]!, groups[b]!);
      sim[a * n + b] = s;
      sim[b * n + a] = s;
    }
  }
  const alive = groups.map(() => true);
  // Each row's most similar live partner, recomputed when it may have changed.
  const best = new Int32Array(n).fill(-1);
  const rowBest = (a: number) => {
    let j = -1;
    let s = -Infinity;
    for (let b = 0; b < n; b++) {
      if (b === a || !alive[b]) continue;
      const v = sim[a * n + b]!;
      if (v > s + TIE_EPSILON) {
        s = v;
        j = b;
      }
    }
    best[a] = j;
  };
  for (let a = 0; a < n; a++) rowBest(a);

  for (;;) {
    await pacer.spend(n * 4);
    let a = -1;
    let s = -Infinity;
    for (let i = 0; i < n; i++) {
      if (!alive[i] || best[i]! < 0) continue;
      const v = sim[i * n + best[i]!]!;
      if (v > s + TIE_EPSILON) {
        s = v;
        a = i;
      }
    }
    if (a < 0 || s < threshold) break;
    const [into, from] = [a, best[a]!];
    // Lance–Williams: the average linkage of the merged group is the weighted mean of the
    // two groups' linkages, so a merge needs no vector arithmetic.
    const wi = groups[into]!.weight;
    const wf = groups[from]!.weight;
    for (let c = 0; c < n; c++) {
      if (!alive[c] || c === into || c === from) continue;
      const v = (wi * sim[into * n + c]! + wf * sim[from * n + c]!) / (wi + wf);
      sim[into * n + c] = v;
      sim[c * n + into] = v;
    }
    groups[into]!.members.push(...groups[from]!.members);
    groups[into]!.weight += wf;
    alive[from] = false;
    for (let c = 0; c < n; c++) {
      if (!alive[c]) continue;
      if (c === into || best[c] === into || best[c] === from) rowBest(c);
      else if (sim[c * n + into]! > sim[c * n + best[c]!]! + TIE_EPSILON) best[c] = into;
    }
  }
  return groups.filter((_, i) => alive[i]);
}

/**
 * For very large weeks: each group joins the most similar group kept so far when the
 * similarity reaches the threshold (one pass, in order); the biggest kept groups are then
 * clustered in full.
 */
async function leaderPass(
  groups: Group[],
  threshold: number,
  link: Link,
  pacer: Pacer,
): Promise<Group[]> {
  const kept: Group[] = [];
  for (const g of groups) {
    await pacer.spend(kept.length * g.vector.length);
    let target: Group | undefined;
    let s = -Infinity;
    for (const k of kept) {
      const v = link(k, g);
      if (v > s + TIE_EPSILON) {
        s = v;
        target = k;
      }
    }
    if (target && s >= threshold) mergeInto(target, g);
    else kept.push(g);
  }
  return kept.sort((a, b) => b.weight - a.weight || a.members[0]! - b.members[0]!);
}

function toTopic(g: Group): Topic {
  return { members: [...g.members].sort((x, y) => x - y), size: g.weight };
}

function mergeInto(into: Group, from: Group): void {
  into.nonzero = undefined;
  into.members.push(...from.members);
  into.weight += from.weight;
  for (let d = 0; d < into.vector.length; d++) into.vector[d]! += from.vector[d]!;
  for (const [key, v] of from.profile) into.profile.set(key, (into.profile.get(key) ?? 0) + v);
}

/** Dot product of two groups' embedding sums over the non-zero dimensions of the sparser one. */
function sparseVectorDot(a: Group, b: Group): number {
  const na = nonzeroOf(a);
  const nb = nonzeroOf(b);
  const [small, other] = na.length <= nb.length ? [a, b] : [b, a];
  let s = 0;
  for (const d of small.nonzero!) s += small.vector[d]! * other.vector[d]!;
  return s;
}

function nonzeroOf(g: Group): Int32Array {
  if (!g.nonzero) {
    const out: number[] = [];
    for (let d = 0; d < g.vector.length; d++) if (g.vector[d] !== 0) out.push(d);
    g.nonzero = Int32Array.from(out);
  }
  return g.nonzero;
}

function sparseDot(a: Map<string, number>, b: Map<string, number>): number {
  const [small, large] = a.size <= b.size ? [a, b] : [b, a];
  let s = 0;
  for (const [key, v] of small) {
    const w = large.get(key);
    if (w !== undefined) s += v * w;
  }
  return s;
}

function toUnit(vector: ArrayLike<number>, dims: number): Float64Array {
  if (vector.length !== dims)
    throw new Error(`vector has ${vector.length} dimensions, expected ${dims}`);
  const out = Float64Array.from(vector);
  let norm = 0;
  for (let d = 0; d < dims; d++) norm += out[d]! * out[d]!;
  if (norm === 0) return out;
  const inv = 1 / Math.sqrt(norm);
  for (let d = 0; d < dims; d++) out[d]! *= inv;
  return out;
}

export function dot(a: ArrayLike<number>, b: ArrayLike<number>): number {
  let s = 0;
  for (let d = 0; d < a.length; d++) s += a[d]! * b[d]!;
  return s;
}
