import { words, isStopword } from './tokenizer.js';

// Character trigrams of terms: what question matching (question-match.ts) compares, and what
// a question's vocabulary (question-vocabulary.ts) and an entry's profile keep per term.

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

/** One of 1,024 buckets of a trigram code (its low 32 bits, mixed). */
export function gramBucket(code: number): number {
  return Math.imul(code | 0, 0x9e3779b1) >>> 22;
}

/**
 * Bounded memo of termGrams: every query derives the trigrams of its own terms, and every
 * entry written those of its question's (a KB's question vocabulary is small).
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
