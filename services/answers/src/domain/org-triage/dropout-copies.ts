// Dropout augmentation for an organization's training run: each ticket is trained on as it is
// and as a few noisy copies that lack a random share of its features. On a few hundred
// tickets this is a better regularizer than a larger L2 alone: a model cannot lean on one
// rare word or template line, because it must also classify the copies that miss it, while
// the features many tickets share keep their weight (Wager, Wang & Liang 2013, "Dropout
// training as adaptive regularization"). Cross-validated on NLBSE'24: docs/triage.md.
import { mulberry32 } from '@support-agent/shared';
import type { SparseData } from './fit-softmax.js';

/**
 * The rows, then `copies` copies of each with every feature dropped at `rate` (seeded) and the
 * kept ones scaled by 1 / (1 − rate), so a copy's expected features are the row's own.
 */
export function withDropoutCopies(
  d: SparseData,
  copies: number,
  rate: number,
  seed: number,
): SparseData {
  if (copies === 0) return d;
  if (!(rate > 0 && rate < 1)) throw new Error('dropout rate must be between 0 and 1');
  const random = mulberry32(seed);
  const n = d.y.length;
  const keptScale = 1 / (1 - rate);
  // Sizes are known up to the dropped features: allocate for all, then trim.
  const ptr = new Int32Array(n * (copies + 1) + 1);
  const idx = new Int32Array(d.idx.length * (copies + 1));
  const val = new Float32Array(idx.length);
  idx.set(d.idx);
  val.set(d.val);
  ptr.set(d.ptr);
  let nnz = d.idx.length;
  let row = n;
  for (let copy = 1; copy <= copies; copy++)
    for (let i = 0; i < n; i++) {
      for (let j = d.ptr[i]!; j < d.ptr[i + 1]!; j++) {
        if (random() < rate) continue;
        idx[nnz] = d.idx[j]!;
        val[nnz++] = d.val[j]! * keptScale;
      }
      ptr[++row] = nnz;
    }
  const y = new Int32Array(n * (copies + 1));
  const rowWeight = new Float32Array(y.length);
  for (let copy = 0; copy <= copies; copy++) {
    y.set(d.y, copy * n);
    rowWeight.set(d.rowWeight, copy * n);
  }
  return { ptr, idx: idx.slice(0, nnz), val: val.slice(0, nnz), y, rowWeight };
}
