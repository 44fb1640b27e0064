import type { EntryTextFacts } from '../../domain/entry-profile.js';

/**
 * What the reranker reads of each slot's question (entry-profile.ts), kept in typed arrays so
 * a query neither reads question text back from the journal nor tokenises it: the question's
 * key, the squared norm of its trigram counts, and its distinct terms, as ids into the
 * organization's question vocabulary (one string per distinct term, shared by all slots).
 */
export class QuestionFacts {
  keys = new Float64Array(0);
  gramNorms = new Uint32Array(0);
  /** Slot → where its term ids start in `pool`, and how many there are. */
  starts = new Uint32Array(0);
  counts = new Uint16Array(0);
  pool = new Uint32Array(1024);
  poolLength = 0;
  readonly vocabulary: string[] = [];
  private readonly idOf = new Map<string, number>();

  ensureCapacity(capacity: number): void {
    if (capacity <= this.keys.length) return;
    this.keys = grow(this.keys, new Float64Array(capacity));
    this.gramNorms = grow(this.gramNorms, new Uint32Array(capacity));
    this.starts = grow(this.starts, new Uint32Array(capacity));
    this.counts = grow(this.counts, new Uint16Array(capacity));
  }

  /** Records a new slot's facts (slots are written once). */
  write(slot: number, facts: EntryTextFacts): void {
    this.keys[slot] = facts.questionKey;
    this.gramNorms[slot] = facts.questionGramNorm2;
    const n = facts.questionTerms.length;
    if (this.poolLength + n > this.pool.length)
      this.pool = grow(
        this.pool,
        new Uint32Array(Math.max(this.pool.length * 2, this.poolLength + n)),
      );
    this.starts[slot] = this.poolLength;
    this.counts[slot] = n;
    for (const term of facts.questionTerms) {
      let id = this.idOf.get(term);
      if (id === undefined) {
        id = this.vocabulary.length;
        this.vocabulary.push(term);
        this.idOf.set(term, id);
      }
      this.pool[this.poolLength++] = id;
    }
  }

  /** The slot's distinct question terms, in order. */
  termsOf(slot: number): string[] {
    const out: string[] = [];
    const start = this.starts[slot]!;
    for (let i = 0; i < this.counts[slot]!; i++) out.push(this.vocabulary[this.pool[start + i]!]!);
    return out;
  }
}

function grow<T extends Float64Array | Uint32Array | Uint16Array>(from: T, to: T): T {
  to.set(from);
  return to;
}
