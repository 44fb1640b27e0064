import type { QuestionTerms, QuestionVocabulary } from './question-vocabulary.js';
import { gramBucket, gramCounts, type GramCounts } from './term-grams.js';

/**
 * How closely a query matches an entry's question, independently of its answer: the
 * cosine of the character trigram counts of their distinct terms (the reranker's
 * questionChars; its coverage features are in rerank.ts). Support questions are mostly
 * paraphrases of the FAQ question that answers them, so the question alone carries more
 * signal than the question+answer blend the first-stage scores see.
 */

/** Stamps of QueryWords: unique per query (a double counts to 2^53 without repeating). */
let lastStamp = 0;

/**
 * One query's side of the question features, for the questions it reranks. Reranked
 * questions share words, so each question term is looked up once per query (by its id in the
 * question's vocabulary): its trigram matches with the query's trigrams, and its position
 * among the query's terms.
 */
export class QueryWords {
  readonly grams: GramCounts;
  /**
   * A bit per hash bucket of the query's trigram codes (1,024 buckets): a question trigram
   * whose bit is clear is not among them, so most question trigrams are ruled out by one
   * array read instead of a Map lookup. A set bit still asks the Map.
   */
  private readonly present = new Int32Array(32);
  private readonly terms: readonly string[];
  private readonly stamp = ++lastStamp;
  /**
   * The vocabulary the query's terms were last looked up in, its size then (a term added since
   * may be one of them), and their ids there (-1: absent).
   */
  private mapped: QuestionVocabulary | undefined;
  private mappedSize = 0;
  private readonly termIds: Int32Array;
  /** Of the question last compared: how many of its terms the query holds. */
  shared = 0;

  /** `terms`: the query's distinct terms (at most 127). */
  constructor(terms: readonly string[]) {
    this.terms = terms;
    this.termIds = new Int32Array(terms.length);
    this.grams = gramCounts(terms);
    for (const g of this.grams.counts.keys()) {
      const b = gramBucket(g);
      this.present[b >>> 5]! |= 1 << (b & 31);
    }
  }

  /**
   * Compares a question's terms with the query: flags in `held` (by query position) the
   * query terms the question holds, sets `shared`, and returns the question's trigram matches
   * with the query (Σ over its terms of each term's matches: the dot product of the trigram
   * counts).
   */
  compare(question: QuestionTerms, held: Uint8Array): number {
    const vocabulary = question.vocabulary;
    if (vocabulary !== this.mapped || vocabulary.size !== this.mappedSize) {
      for (let j = 0; j < this.terms.length; j++) this.termIds[j] = vocabulary.find(this.terms[j]!);
      this.mapped = vocabulary;
      this.mappedSize = vocabulary.size;
    }
    const { stamps, found, gramCodes } = vocabulary;
    const ids = question.ids;
    let dot = 0;
    let shared = 0;
    for (let i = 0; i < ids.length; i++) {
      const id = ids[i]!;
      let packed: number;
      if (stamps[id] === this.stamp) packed = found[id]!;
      else {
        // Matches · 128 + 1 + the term's position in the query (0: not in it).
        let m = 0;
        for (let g = vocabulary.gramsStart(id), end = vocabulary.gramsEnd(id); g < end; g++) {
          const code = gramCodes[g]!;
          const b = gramBucket(code);
          if ((this.present[b >>> 5]! & (1 << (b & 31))) !== 0)
            m += this.grams.counts.get(code) ?? 0;
        }
        packed = m * 128 + 1 + this.termIds.indexOf(id);
        stamps[id] = this.stamp;
        found[id] = packed;
      }
      const position = (packed % 128) - 1;
      if (position >= 0) {
        held[position] = 1;
        shared++;
      }
      dot += Math.floor(packed / 128);
    }
    this.shared = shared;
    return dot;
  }

  /**
   * The cosine of the trigram counts of the query's terms and a question's distinct terms,
   * from their dot product (`compare`) and the question's squared norm (which an index keeps
   * per entry). Counts are small integers, so dot product and norms are exact in any order.
   */
  charsCosine(dot: number, questionNorm2: number): number {
    if (this.grams.norm2 === 0 || questionNorm2 === 0) return 0;
    return dot / (Math.sqrt(this.grams.norm2) * Math.sqrt(questionNorm2));
  }
}
