/**
 * Keeps the k best (slot, score) pairs seen, without sorting them all: a min-heap on score.
 * A score equal to the k-th best does not displace it; a better one evicts the heap's root,
 * which among pairs tied at the k-th place is the one the heap's shape put there. So which of
 * them stay follows from the order of the offers: the same for the same offers, but neither
 * the lowest slots nor the first offered.
 */
export class TopK {
  private slots: Int32Array;
  private scores: Float64Array;
  size = 0;
  /**
   * What a score must beat to be kept: the lowest kept once k are kept, −∞ before. Callers
   * compare with it before calling `offer` (most scores of a pass are not kept).
   */
  floor = -Infinity;

  constructor(public k: number) {
    this.slots = new Int32Array(k);
    this.scores = new Float64Array(k);
  }

  /**
   * Empties it to keep the `k` best from now on, in the arrays it has when they are long
   * enough: a pass that needs one TopK at a time keeps one (allocating two typed arrays per
   * pass was a measurable part of a search).
   */
  reset(k: number): this {
    if (this.slots.length < k) {
      this.slots = new Int32Array(k);
      this.scores = new Float64Array(k);
    }
    this.k = k;
    this.size = 0;
    this.floor = -Infinity;
    return this;
  }

  /** Offers a pair; true when it is kept (for now). */
  offer(slot: number, score: number): boolean {
    if (this.k === 0) return false;
    if (this.size < this.k) {
      let i = this.size++;
      while (i > 0) {
        const parent = (i - 1) >> 1;
        if (this.scores[parent]! <= score) break;
        this.slots[i] = this.slots[parent]!;
        this.scores[i] = this.scores[parent]!;
        i = parent;
      }
      this.slots[i] = slot;
      this.scores[i] = score;
      if (this.size === this.k) this.floor = this.scores[0]!;
      return true;
    }
    if (score <= this.scores[0]!) return false;
    let i = 0;
    for (;;) {
      const l = 2 * i + 1;
      if (l >= this.size) break;
      const r = l + 1;
      const c = r < this.size && this.scores[r]! < this.scores[l]! ? r : l;
      if (this.scores[c]! >= score) break;
      this.slots[i] = this.slots[c]!;
      this.scores[i] = this.scores[c]!;
      i = c;
    }
    this.slots[i] = slot;
    this.scores[i] = score;
    this.floor = this.scores[0]!;
    return true;
  }

  /** The slots kept, in no particular order. */
  result(): number[] {
    // A plain loop: Array.from over a typed array goes through the iterator protocol.
    const out = new Array<number>(this.size);
    for (let i = 0; i < this.size; i++) out[i] = this.slots[i]!;
    return out;
  }
}
