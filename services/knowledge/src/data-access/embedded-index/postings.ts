import { grown } from '../../domain/typed-arrays.js';

/** The slots holding a term and the term's BM25 weight in each, slots ascending. */
export interface Posting {
  slots: Int32Array;
  weights: Float32Array;
  /**
   * One bit per position, set where the entry's answer holds the term (the reranker's answer
   * coverage): bit i % 8 of byte i >> 3.
   */
  inAnswer: Uint8Array;
  length: number;
  /** The largest weight ever added (dead slots included): what the term can add to a score. */
  maxWeight: number;
}

/**
 * One organization's inverted index: term id → posting, and the document frequency of
 * each term among live entries. Slots are only appended, so postings stay sorted; a
 * removed entry stays in its postings (search skips dead slots) until the organization
 * is compacted, but leaves the document frequencies at once.
 */
export class InvertedIndex {
  readonly postings = new Map<number, Posting>();
  readonly df = new Map<number, number>();

  /** Adds the slot's sparse vector (term ids and weights); `answer` holds its answer's term ids. */
  add(
    slot: number,
    terms: ArrayLike<number>,
    weights: ArrayLike<number>,
    answer: ReadonlySet<number>,
  ): void {
    for (let i = 0; i < terms.length; i++) {
      const term = terms[i]!;
      this.df.set(term, (this.df.get(term) ?? 0) + 1);
      this.addPosting(term, slot, weights[i]!, answer.has(term));
    }
  }

  /** An entry with these terms is gone: they occur in one entry fewer. */
  forget(terms: ArrayLike<number>): void {
    for (let i = 0; i < terms.length; i++) {
      const term = terms[i]!;
      const n = (this.df.get(term) ?? 1) - 1;
      if (n > 0) this.df.set(term, n);
      else this.df.delete(term);
    }
  }

  /**
   * The BM25 of each of `slots` (ascending) for the weighted query terms, into `into` (zeroed):
   * Σ over the terms, in their order, of the term's weight × the slot's weight for it
   * (CandidateSet.bm25). Each term's posting is walked once, forward.
   */
  bm25Of(
    slots: Int32Array,
    terms: readonly { id: number; weight: number }[],
    into: Float64Array,
  ): void {
    for (const { id, weight } of terms) {
      const p = this.postings.get(id);
      if (!p) continue;
      let pos = 0;
      for (let k = 0; k < slots.length && pos < p.length; k++) {
        pos = seek(p.slots, pos, p.length, slots[k]!);
        if (pos < p.length && p.slots[pos] === slots[k]) into[k]! += weight * p.weights[pos]!;
      }
    }
  }

  private addPosting(term: number, slot: number, weight: number, inAnswer: boolean): void {
    let p = this.postings.get(term);
    if (!p) {
      p = {
        slots: new Int32Array(4),
        weights: new Float32Array(4),
        inAnswer: new Uint8Array(1),
        length: 0,
        maxWeight: 0,
      };
      this.postings.set(term, p);
    } else if (p.length === p.slots.length) {
      const size = Math.ceil(p.length * 1.5);
      p.slots = grown(p.slots, new Int32Array(size));
      p.weights = grown(p.weights, new Float32Array(size));
      p.inAnswer = grown(p.inAnswer, new Uint8Array((size + 7) >> 3));
    }
    p.slots[p.length] = slot;
    p.weights[p.length] = weight;
    if (inAnswer) p.inAnswer[p.length >> 3]! |= 1 << (p.length & 7);
    p.length++;
    if (weight > p.maxWeight) p.maxWeight = weight;
  }
}

/**
 * The first position in slots[from, length) holding a slot ≥ `slot`: galloping (1, 2, 4, …
 * ahead of `from`) then a binary search in the last step. Callers look up ascending slots,
 * so each search starts where the last one ended and reads memory close to it.
 */
export function seek(slots: Int32Array, from: number, length: number, slot: number): number {
  let lo = from;
  let step = 1;
  let hi = from;
  while (hi < length && slots[hi]! < slot) {
    lo = hi + 1;
    hi += step;
    step *= 2;
  }
  if (hi > length) hi = length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (slots[mid]! < slot) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/**
 * Whether the answer of the entry at `slot` holds the posting's term. A posting only grows at
 * its end (slots are appended), so what it says of a slot it holds never changes: it can be
 * asked after an await.
 */
export function answerHolds(p: Posting, slot: number): boolean {
  const pos = seek(p.slots, 0, p.length, slot);
  return (
    pos < p.length && p.slots[pos] === slot && ((p.inAnswer[pos >> 3]! >> (pos & 7)) & 1) === 1
  );
}
