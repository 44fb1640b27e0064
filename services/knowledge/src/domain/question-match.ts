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
