// Multinomial logistic regression over sparse features: balanced class weights, L2,
// full-batch Adam from zero weights, so the same data gives the same model. Used by the
// built-in model's offline training (training/) and by each organization's training runs.

/** Examples in compressed sparse rows: row i has features idx[ptr[i]..ptr[i+1]). */
export interface SparseData {
  ptr: Int32Array;
  idx: Int32Array;
  val: Float32Array;
  y: Int32Array;
  /** Weight of each row in the loss (1 for most; augmented copies may weigh less). */
  rowWeight: Float32Array;
}

export interface FitOptions {
  classes: number;
  features: number;
  l2: number;
  /** Per-feature multiplier of l2 (1 when absent). */
  l2Scale?: Float32Array;
  epochs: number;
  learningRate: number;
  /** Share of the loss each class carries (sums to 1); equal shares when absent. */
  classShare?: number[];
  /** Called every 50 epochs with the mean loss. */
  progress?: (epoch: number, loss: number) => void;
  /** Called after every epoch; a long fit gives way to other work here (it may be async-free). */
  onEpoch?: (epoch: number) => void;
}

export interface Fitted {
  /** features × classes, row-major. */
  w: Float64Array;
  b: Float64Array;
}

/** Builds CSR data from per-row [index, value] lists. */
export function toSparse(
  rows: Array<Map<number, number>>,
  y: number[],
  rowWeight?: number[],
): SparseData {
  const ptr = new Int32Array(rows.length + 1);
  rows.forEach((r, i) => (ptr[i + 1] = ptr[i]! + r.size));
  const idx = new Int32Array(ptr[rows.length]!);
  const val = new Float32Array(ptr[rows.length]!);
  rows.forEach((r, i) => {
    let j = ptr[i]!;
    for (const [f, v] of r) {
      idx[j] = f;
      val[j++] = v;
    }
  });
  return {
    ptr,
    idx,
    val,
    y: Int32Array.from(y),
    rowWeight: Float32Array.from(rowWeight ?? y.map(() => 1)),
  };
}

/** Fits weights and biases; each class carries its share of the loss whatever its number of examples. */
export function fitSoftmax(data: SparseData, o: FitOptions): Fitted {
  const K = o.classes;
  const n = data.y.length;
  const mass = new Float64Array(K);
  for (let i = 0; i < n; i++) mass[data.y[i]!]! += data.rowWeight[i]!;
  const total = mass.reduce((a, b) => a + b, 0);
  const share = o.classShare ?? Array.from({ length: K }, () => 1 / K);
  const classWeight = Array.from(mass, (m, k) => (m > 0 ? (share[k]! * total) / m : 0));

  const w = new Float64Array(o.features * K);
  const b = new Float64Array(K);
  const gw = new Float64Array(w.length);
  const gb = new Float64Array(K);
  const m1 = new Float64Array(w.length);
  const m2 = new Float64Array(w.length);
  const mb1 = new Float64Array(K);
  const mb2 = new Float64Array(K);
  const [beta1, beta2, eps] = [0.9, 0.999, 1e-8];
  const scores = new Float64Array(K);

  for (let epoch = 1; epoch <= o.epochs; epoch++) {
    gw.fill(0);
    gb.fill(0);
    let loss = 0;
    for (let i = 0; i < n; i++) {
      const [start, end] = [data.ptr[i]!, data.ptr[i + 1]!];
      for (let k = 0; k < K; k++) scores[k] = b[k]!;
      for (let j = start; j < end; j++) {
        const base = data.idx[j]! * K;
        const v = data.val[j]!;
        for (let k = 0; k < K; k++) scores[k]! += v * w[base + k]!;
      }
      let max = -Infinity;
      for (let k = 0; k < K; k++) max = Math.max(max, scores[k]!);
      let sum = 0;
      for (let k = 0; k < K; k++) sum += scores[k] = Math.exp(scores[k]! - max);
      const yi = data.y[i]!;
      const cw = (classWeight[yi]! * data.rowWeight[i]!) / total;
      loss -= cw * Math.log(Math.max(1e-12, scores[yi]! / sum));
      for (let k = 0; k < K; k++) {
        const g = cw * (scores[k]! / sum - (k === yi ? 1 : 0));
        gb[k]! += g;
        for (let j = start; j < end; j++) gw[data.idx[j]! * K + k]! += g * data.val[j]!;
      }
    }
    const c1 = 1 - beta1 ** epoch;
    const c2 = 1 - beta2 ** epoch;
    for (let f = 0; f < w.length; f++) {
      const g = gw[f]! + o.l2 * (o.l2Scale ? o.l2Scale[Math.floor(f / K)]! : 1) * w[f]!;
      if (g === 0 && m1[f] === 0) continue; // a feature no example has: stays zero
      m1[f] = beta1 * m1[f]! + (1 - beta1) * g;
      m2[f] = beta2 * m2[f]! + (1 - beta2) * g * g;
      w[f]! -= (o.learningRate * (m1[f]! / c1)) / (Math.sqrt(m2[f]! / c2) + eps);
    }
    for (let k = 0; k < K; k++) {
      const g = gb[k]!;
      mb1[k] = beta1 * mb1[k]! + (1 - beta1) * g;
      mb2[k] = beta2 * mb2[k]! + (1 - beta2) * g * g;
      b[k]! -= (o.learningRate * (mb1[k]! / c1)) / (Math.sqrt(mb2[k]! / c2) + eps);
    }
    if (o.progress && epoch % 50 === 0) o.progress(epoch, loss);
    o.onEpoch?.(epoch);
  }
  return { w, b };
}
