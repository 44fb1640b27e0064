/**
 * A linear ranking function fitted listwise (ListNet-style softmax, "conditional
 * logit"): per query, the probability mass the softmax over its candidates puts on
 * the relevant ones is maximised. It optimises what search is judged on (the
 * relevant entry on top) rather than every (query, entry) pair alike, as a
 * pointwise fit would. Plain gradient ascent on standardised features with an
 * L2 penalty; deterministic.
 */

export interface RankedList {
  /** Feature vectors of the query's candidates. */
  x: number[][];
  /** Which candidates are relevant; lists without a relevant candidate teach nothing. */
  relevant: boolean[];
}

export interface ListwiseOptions {
  l2?: number;
  iterations?: number;
  learningRate?: number;
}

/** Weights on the raw features (no bias: a softmax ignores it). */
export function fitListwise(lists: RankedList[], options: ListwiseOptions = {}): number[] {
  const usable = lists.filter((l) => l.relevant.some(Boolean) && l.relevant.some((r) => !r));
  const d = usable[0]?.x[0]?.length ?? 0;
  if (d === 0) return [];
  const mean = new Array<number>(d).fill(0);
  const sd = new Array<number>(d).fill(0);
  let rows = 0;
  for (const l of usable) {
    for (const x of l.x) {
      rows++;
      x.forEach((v, j) => (mean[j]! += v));
    }
  }
  for (let j = 0; j < d; j++) mean[j]! /= rows;
  for (const l of usable) for (const x of l.x) x.forEach((v, j) => (sd[j]! += (v - mean[j]!) ** 2));
  for (let j = 0; j < d; j++) sd[j] = Math.sqrt(sd[j]! / rows) || 1;
  const z = usable.map((l) => l.x.map((x) => x.map((v, j) => (v - mean[j]!) / sd[j]!)));

  const l2 = options.l2 ?? 0.01;
  const rate = options.learningRate ?? 0.5;
  // Flat layout: row r of list q is z[(offset[q] + r) * d ...].
  const offsets = new Int32Array(z.length + 1);
  z.forEach((xs, q) => (offsets[q + 1] = offsets[q]! + xs.length));
  const flat = new Float64Array(offsets[z.length]! * d);
  const relevant = new Uint8Array(offsets[z.length]!);
  z.forEach((xs, q) =>
    xs.forEach((x, r) => {
      flat.set(x, (offsets[q]! + r) * d);
      relevant[offsets[q]! + r] = usable[q]!.relevant[r] ? 1 : 0;
    }),
  );
  const w = new Float64Array(d);
  const grad = new Float64Array(d);
  const e = new Float64Array(Math.max(...z.map((xs) => xs.length)));
  for (let iter = 0; iter < (options.iterations ?? 1500); iter++) {
    grad.fill(0);
    for (let q = 0; q < z.length; q++) {
      const first = offsets[q]!;
      const n = offsets[q + 1]! - first;
      let max = -Infinity;
      for (let r = 0; r < n; r++) {
        let s = 0;
        for (let j = 0; j < d; j++) s += flat[(first + r) * d + j]! * w[j]!;
        e[r] = s;
        if (s > max) max = s;
      }
      let total = 0;
      let relevantTotal = 0;
      for (let r = 0; r < n; r++) {
        e[r] = Math.exp(e[r]! - max);
        total += e[r]!;
        if (relevant[first + r]) relevantTotal += e[r]!;
      }
      for (let r = 0; r < n; r++) {
        const target = relevant[first + r] ? e[r]! / relevantTotal : 0;
        const diff = target - e[r]! / total;
        if (diff === 0) continue;
        for (let j = 0; j < d; j++) grad[j]! += diff * flat[(first + r) * d + j]!;
      }
    }
    for (let j = 0; j < d; j++) w[j]! += rate * (grad[j]! / z.length - l2 * w[j]!);
  }
  return Array.from(w, (v, j) => v / sd[j]!);
}
