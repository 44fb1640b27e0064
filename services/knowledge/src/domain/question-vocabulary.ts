import { termGrams } from './term-grams.js';
import { grown } from './typed-arrays.js';

/**
 * Question terms as small integer ids, each with its character trigrams (term-grams.ts)
 * computed once, when the term is first seen. A query compares its words with the distinct
 * terms of the 20 questions it reranks; by id, what it found for a term is one typed-array
 * read instead of string-keyed `Map` lookups (of the term's trigrams and of the query's own
 * memo), which were most of question matching's CPU.
 *
 * The embedded index keeps one per organization (its question terms, never forgotten: a KB's
 * question vocabulary is small next to its text); profiles derived from text use a shared one
 * (entry-profile.ts).
 */
export class QuestionVocabulary {
  readonly terms: string[] = [];
  private readonly ids = new Map<string, number>();
  /** Trigram codes of term i: grams[gramStart[i] … gramStart[i + 1]). */
  private gramStart = new Uint32Array(257);
  private grams = new Float64Array(2048);
  /**
   * Scratch of the queries that compare with this vocabulary (QueryWords): per term id, the
   * stamp of the query that last looked the term up, and what it found. A query's stamp is
   * unique, so an entry left by another query is simply looked up again.
   */
  stamps = new Float64Array(256);
  found = new Int32Array(256);

  get size(): number {
    return this.terms.length;
  }

  /** The term's id, or -1 when it is not in the vocabulary. */
  find(term: string): number {
    return this.ids.get(term) ?? -1;
  }

  /** The term's id, added when new. */
  idFor(term: string): number {
    let id = this.ids.get(term);
    if (id !== undefined) return id;
    id = this.terms.length;
    const codes = termGrams(term);
    const start = this.gramStart[id]!;
    if (id + 2 > this.gramStart.length) {
      this.gramStart = grown(this.gramStart, new Uint32Array(this.gramStart.length * 2));
      this.stamps = grown(this.stamps, new Float64Array(this.gramStart.length));
      this.found = grown(this.found, new Int32Array(this.gramStart.length));
    }
    if (start + codes.length > this.grams.length)
      this.grams = grown(
        this.grams,
        new Float64Array(Math.max(this.grams.length * 2, start + codes.length)),
      );
    this.grams.set(codes, start);
    this.gramStart[id + 1] = start + codes.length;
    this.terms.push(term);
    this.ids.set(term, id);
    return id;
  }

  /** Where term `id`'s trigram codes start in `gramCodes`, and where they end. */
  gramsStart(id: number): number {
    return this.gramStart[id]!;
  }

  gramsEnd(id: number): number {
    return this.gramStart[id + 1]!;
  }

  get gramCodes(): Float64Array {
    return this.grams;
  }
}

/** An entry question's distinct terms, in order of first occurrence, as ids into a vocabulary. */
export interface QuestionTerms {
  vocabulary: QuestionVocabulary;
  ids: ArrayLike<number>;
}

/** The question terms as ids into `vocabulary` (new terms are added). */
export function questionTermsIn(
  vocabulary: QuestionVocabulary,
  terms: readonly string[],
): QuestionTerms {
  const ids = new Uint32Array(terms.length);
  for (let i = 0; i < terms.length; i++) ids[i] = vocabulary.idFor(terms[i]!);
  return { vocabulary, ids };
}

/** The terms themselves (tests, diagnostics). */
export function termsOf(question: QuestionTerms): string[] {
  return Array.from(question.ids, (id) => question.vocabulary.terms[id]!);
}
