import { words, isStopword, terms } from './tokenizer.js';

/**
 * How closely a query matches an entry's question, independently of its answer.
 * Support questions are mostly paraphrases of the FAQ question that answers them,
 * so the question alone carries more signal than the question+answer blend the
 * first-stage scores see.
 */

/** Character n-grams of content words: tolerant of inflections, compounds and typos. */
const CHARGRAM = 3;

/** Distinct stemmed content terms of a text. */
export function termSet(text: string): Set<string> {
  return new Set(terms(text));
}

/**
 * Share of the query's distinct terms that the question contains, each weighted by
 * its IDF (`weightOf`): 1 when every informative query word is in the question.
 */
export function queryCoverage(
  queryTerms: readonly string[],
  question: ReadonlySet<string>,
  weightOf: (term: string) => number,
): number {
  let total = 0;
  let covered = 0;
  for (const t of queryTerms) {
    const w = weightOf(t);
    total += w;
    if (question.has(t)) covered += w;
  }
  return total > 0 ? covered / total : 0;
}

/** Share of the question's distinct terms that the query contains (1: nothing of it is missing). */
export function questionCoverage(
  query: ReadonlySet<string>,
  question: ReadonlySet<string>,
): number {
  if (question.size === 0) return 0;
  let n = 0;
  for (const t of question) if (query.has(t)) n++;
  return n / question.size;
}

/** Character trigram counts of a text's content words (each word padded with < and >). */
export function charGrams(text: string): Map<string, number> {
  const out = new Map<string, number>();
  for (const w of words(text)) {
    if (isStopword(w)) continue;
    const padded = `<${w}>`;
    for (let i = 0; i + CHARGRAM <= padded.length; i++) {
      const g = padded.slice(i, i + CHARGRAM);
      out.set(g, (out.get(g) ?? 0) + 1);
    }
  }
  return out;
}

/**
 * A character trigram as one number: its three UTF-16 code units side by side (48 bits, exact
 * in a double), so trigram counts are kept in number-keyed maps without slicing strings.
 */
const gramCode = (s: string, i: number): number =>
  s.charCodeAt(i) * 2 ** 32 + s.charCodeAt(i + 1) * 2 ** 16 + s.charCodeAt(i + 2);

/**
 * Bounded memo of termGrams: a KB's question vocabulary is small, and every query
 * compares its trigrams with those of the 20 questions it reranks.
 */
const GRAM_CACHE_SIZE = 50_000;
const gramCache = new Map<string, readonly number[]>();

/**
 * The character trigrams (as codes, with repeats) that charGrams counts for one term.
 * charGrams of terms joined by spaces counts exactly the trigrams of each term, added up.
 */
export function termGrams(term: string): readonly number[] {
  let out = gramCache.get(term);
  if (out !== undefined) return out;
  const codes: number[] = [];
  for (const w of words(term)) {
    if (isStopword(w)) continue;
    const padded = `<${w}>`;
    for (let i = 0; i + CHARGRAM <= padded.length; i++) codes.push(gramCode(padded, i));
  }
  if (gramCache.size >= GRAM_CACHE_SIZE) gramCache.clear();
  gramCache.set(term, (out = codes));
  return out;
}

/** Trigram counts of a list of terms (charGrams of the terms joined by spaces), by code. */
export interface GramCounts {
  counts: Map<number, number>;
  /** Σ count², the squared norm of the count vector. */
  norm2: number;
}

export function gramCounts(terms: readonly string[]): GramCounts {
  const counts = new Map<number, number>();
  for (const t of terms) for (const g of termGrams(t)) counts.set(g, (counts.get(g) ?? 0) + 1);
  let norm2 = 0;
  for (const c of counts.values()) norm2 += c * c;
  return { counts, norm2 };
}

/**
 * countCosine(charGrams(query terms), charGrams(question terms)) from the query's counts, the
 * question's distinct terms and its squared norm (which an index can keep per entry). Counts
 * are small integers, so the dot product and norms are exact whatever the order.
 */
export function questionCharsCosine(
  query: GramCounts,
  questionTerms: readonly string[],
  questionNorm2: number,
  /** Each term's matches with this query, filled as terms come (one map per query). */
  matches = new Map<string, number>(),
): number {
  if (query.norm2 === 0 || questionNorm2 === 0) return 0;
  let dot = 0;
  for (const t of questionTerms) {
    let m = matches.get(t);
    if (m === undefined) {
      m = 0;
      for (const g of termGrams(t)) m += query.counts.get(g) ?? 0;
      matches.set(t, m);
    }
    dot += m;
  }
  return dot / (Math.sqrt(query.norm2) * Math.sqrt(questionNorm2));
}

/** Cosine similarity of two count vectors, in [0,1]. */
export function countCosine(a: Map<string, number>, b: Map<string, number>): number {
  if (a.size === 0 || b.size === 0) return 0;
  const [small, large] = a.size <= b.size ? [a, b] : [b, a];
  let dot = 0;
  for (const [k, v] of small) dot += v * (large.get(k) ?? 0);
  const norm = (m: Map<string, number>) => {
    let s = 0;
    for (const v of m.values()) s += v * v;
    return Math.sqrt(s);
  };
  return dot / (norm(a) * norm(b));
}
