/**
 * L2-regularised logistic regression fitted by Newton's method (IRLS), and
 * group k-fold cross-validation: the small, dependency-free learner behind
 * `npm run fit:confidence`. Features are standardised while fitting and the
 * weights are mapped back, so the model applies to raw feature values.
 */

export interface Sample {
  x: number[];
  y: 0 | 1;
  /** Samples of one group (a thread, a question) always fall in the same fold. */
  group: string;
  /** How much the sample counts (default 1). */
  weight?: number;
}

export interface FittedLogistic {
  weights: number[];
  bias: number;
}

export interface FitOptions {
  /** L2 penalty on the standardised weights (not on the bias). */
  l2?: number;
  iterations?: number;
}

const sigmoid = (z: number): number => 1 / (1 + Math.exp(-z));

export function fitLogistic(samples: Sample[], options: FitOptions = {}): FittedLogistic {
  const l2 = options.l2 ?? 1;
  const d = samples[0]?.x.length ?? 0;
  const n = samples.length;
  const mean = new Array<number>(d).fill(0);
  const sd = new Array<number>(d).fill(0);
  for (const s of samples) for (let j = 0; j < d; j++) mean[j]! += s.x[j]! / n;
  for (const s of samples) for (let j = 0; j < d; j++) sd[j]! += (s.x[j]! - mean[j]!) ** 2 / n;
  for (let j = 0; j < d; j++) sd[j] = Math.sqrt(sd[j]!) || 1;
  const z = samples.map((s) => [1, ...s.x.map((v, j) => (v - mean[j]!) / sd[j]!)]);

  // beta[0] is the bias.
  let beta = new Array<number>(d + 1).fill(0);
  for (let iter = 0; iter < (options.iterations ?? 50); iter++) {
    const grad = new Array<number>(d + 1).fill(0);
    const hess = Array.from({ length: d + 1 }, () => new Array<number>(d + 1).fill(0));
    for (let i = 0; i < n; i++) {
      const row = z[i]!;
      let eta = 0;
      for (let j = 0; j <= d; j++) eta += beta[j]! * row[j]!;
      const p = sigmoid(eta);
      const weight = samples[i]!.weight ?? 1;
      const w = weight * Math.max(p * (1 - p), 1e-9);
      const r = weight * (samples[i]!.y - p);
      for (let j = 0; j <= d; j++) {
        grad[j]! += r * row[j]!;
        for (let k = j; k <= d; k++) hess[j]![k]! += w * row[j]! * row[k]!;
      }
    }
    for (let j = 0; j <= d; j++) for (let k = 0; k < j; k++) hess[j]![k] = hess[k]![j]!;
    for (let j = 1; j <= d; j++) {
      grad[j]! -= l2 * beta[j]!;
      hess[j]![j]! += l2;
    }
    const step = solve(hess, grad);
    beta = beta.map((b, j) => b + step[j]!);
    if (Math.max(...step.map(Math.abs)) < 1e-8) break;
  }
  const weights = beta.slice(1).map((b, j) => b / sd[j]!);
  const bias = beta[0]! - weights.reduce((s, w, j) => s + w * mean[j]!, 0);
  return { weights, bias };
}

/** Gaussian elimination with partial pivoting (small dense systems). */
function solve(a: number[][], b: number[]): number[] {
  const n = b.length;
  const m = a.map((row, i) => [...row, b[i]!]);
  for (let c = 0; c < n; c++) {
    let p = c;
    for (let r = c + 1; r < n; r++) if (Math.abs(m[r]![c]!) > Math.abs(m[p]![c]!)) p = r;
    [m[c], m[p]] = [m[p]!, m[c]!];
    const pivot = m[c]![c]! || 1e-12;
    for (let r = 0; r < n; r++) {
      if (r === c) continue;
      const f = m[r]![c]! / pivot;
      if (f === 0) continue;
      for (let k = c; k <= n; k++) m[r]![k]! -= f * m[c]![k]!;
    }
  }
  return m.map((row, i) => row[n]! / (m[i]![i]! || 1e-12));
}

/**
 * Assigns groups to k folds deterministically (sorted group names dealt round-robin
 * after a fixed shuffle), so a thread's samples are always scored by a model that
 * never saw that thread.
 */
export function groupFolds(groups: string[], k: number, seed = 1): Map<string, number> {
  const distinct = [...new Set(groups)].sort();
  let state = seed >>> 0 || 1;
  const random = () => {
    state ^= state << 13;
    state ^= state >>> 17;
    state ^= state << 5;
    return (state >>> 0) / 2 ** 32;
  };
  for (let i = distinct.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [distinct[i], distinct[j]] = [distinct[j]!, distinct[i]!];
  }
  return new Map(distinct.map((g, i) => [g, i % k]));
}
