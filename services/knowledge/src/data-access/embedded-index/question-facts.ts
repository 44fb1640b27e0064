import type { EntryTextFacts } from '../../domain/entry-profile.js';
import { QuestionVocabulary, type QuestionTerms } from '../../domain/question-vocabulary.js';
import { grown } from '../../domain/typed-arrays.js';

/**
 * What the reranker reads of each slot's question (entry-profile.ts), kept in typed arrays so
 * a query neither reads question text back from the journal nor tokenises it: the question's
 * key, the squared norm of its trigram counts, and its distinct terms, as ids into the
 * organization's question vocabulary (each distinct term once, with its trigrams).
 */
export class QuestionFacts {
  keys = new Float64Array(0);
  gramNorms = new Uint32Array(0);
  /** Slot → where its term ids start in `pool`, and how many there are. */
  starts = new Uint32Array(0);
  counts = new Uint16Array(0);
  pool = new Uint32Array(1024);
  poolLength = 0;
  readonly vocabulary = new QuestionVocabulary();

  ensureCapacity(capacity: number): void {
    if (capacity <= this.keys.length) return;
    this.keys = grown(this.keys, new Float64Array(capacity));
    this.gramNorms = grown(this.gramNorms, new Uint32Array(capacity));
    this.starts = grown(this.starts, new Uint32Array(capacity));
    this.counts = grown(this.counts, new Uint16Array(capacity));
  }

  /** Records a new slot's facts (slots are written once). */
  write(slot: number, facts: EntryTextFacts): void {
    this.keys[slot] = facts.questionKey;
    this.gramNorms[slot] = facts.questionGramNorm2;
    const n = facts.questionTerms.length;
    if (this.poolLength + n > this.pool.length)
      this.pool = grown(
        this.pool,
        new Uint32Array(Math.max(this.pool.length * 2, this.poolLength + n)),
      );
    this.starts[slot] = this.poolLength;
    this.counts[slot] = n;
    for (const term of facts.questionTerms)
      this.pool[this.poolLength++] = this.vocabulary.idFor(term);
  }

  /** The slot's distinct question terms, in order (a view of the pool: slots are written once). */
  termsOf(slot: number): QuestionTerms {
    const start = this.starts[slot]!;
    return {
      vocabulary: this.vocabulary,
      ids: this.pool.subarray(start, start + this.counts[slot]!),
    };
  }
}
