import { words, isStopword } from './tokenizer.js';

/**
 * How closely a query matches an entry's question, independently of its answer: the
 * cosine of the character trigram counts of their distinct terms (the reranker's
 * questionChars; its coverage features are in rerank.ts). Support questions are mostly
 * paraphrases of the FAQ question that answers them, so the question alone carries more
 * signal than the question+answer blend the first-stage scores see.
 */

/** Character n-grams of content words: tolerant of inflections, compounds and typos. */
const CHARGRAM = 3;

/**
 * A character trigram as one number, so trigram counts are kept in number-keyed maps without
 * slicing strings: its three UTF-16 code units 10 bits apart when each is below 1024 (a small
 * integer, which maps hash fastest: every Latin letter and digit), else 16 bits apart (48 bits,
 * exact in a double, and ≥ 2^32 since no unit is 0): one code per trigram either way.
 */
function gramCode(s: string, i: number): number {
  const a = s.charCodeAt(i);
  const b = s.charCodeAt(i + 1);
  const c = s.charCodeAt(i + 2);
  if (a < 1024 && b < 1024 && c < 1024) return (a << 20) | (b << 10) | c;
  return a * 2 ** 32 + b * 2 ** 16 + c;
}

/**
 * Bounded memo of termGrams: a KB's question vocabulary is small, and every query
 * compares its trigrams with those of the 20 questions it reranks.
 */
const GRAM_CACHE_SIZE = 50_000;
const gramCache = new Map<string, readonly number[]>();

/**
 * The character trigrams of a term (as codes, with repeats): those of each of its content
 * words, padded with < and > ("<word>"). Terms are single words of letters and digits, so
 * the trigrams of several terms joined by spaces are those of each term, added up.
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

/** Trigram counts of a list of terms, by code. */
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
 * The cosine of the trigram counts of the query's terms and the question's distinct terms,
 * from the query's counts, the question's terms and its squared norm (which an index keeps
 * per entry). Counts are small integers, so the dot product and norms are exact whatever
 * the order.
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
