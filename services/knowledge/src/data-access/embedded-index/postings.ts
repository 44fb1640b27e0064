/** The slots holding a term and the term's BM25 weight in each, slots ascending. */
export interface Posting {
  slots: Int32Array;
  weights: Float32Array;
  length: number;
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

  /** Adds the slot's sparse vector (term ids and weights). */
  add(slot: number, terms: ArrayLike<number>, weights: ArrayLike<number>): void {
    for (let i = 0; i < terms.length; i++) {
      const term = terms[i]!;
      this.df.set(term, (this.df.get(term) ?? 0) + 1);
      this.addPosting(term, slot, weights[i]!);
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
   * The slot's weights for the given terms, as a sparse vector (ascending ids): what lexical
   * scoring reads. Postings hold slots in ascending order, so each is a binary search.
   */
  weightsAt(slot: number, ids: readonly number[]): { indices: number[]; values: number[] } {
    const indices: number[] = [];
    const values: number[] = [];
    for (const id of ids) {
      const p = this.postings.get(id);
      if (!p) continue;
      let lo = 0;
      let hi = p.length - 1;
      while (lo <= hi) {
        const mid = (lo + hi) >> 1;
        const s = p.slots[mid]!;
        if (s === slot) {
          indices.push(id);
          values.push(p.weights[mid]!);
          break;
        }
        if (s < slot) lo = mid + 1;
        else hi = mid - 1;
      }
    }
    return { indices, values };
  }

  private addPosting(term: number, slot: number, weight: number): void {
    let p = this.postings.get(term);
    if (!p) {
      p = { slots: new Int32Array(4), weights: new Float32Array(4), length: 0 };
      this.postings.set(term, p);
    } else if (p.length === p.slots.length) {
      const size = Math.ceil(p.length * 1.5);
      const slots = new Int32Array(size);
      slots.set(p.slots);
      const weights = new Float32Array(size);
      weights.set(p.weights);
      p.slots = slots;
      p.weights = weights;
    }
    p.slots[p.length] = slot;
    p.weights[p.length] = weight;
    p.length++;
  }
}
