import { termId } from './hashing.js';
import type {
  Candidate,
  CandidateSet,
  EmbeddingProvider,
  EntryText,
  QueryTerm,
  SparseVector,
} from './ports.js';
import { termCounts, terms } from './tokenizer.js';

/**
 * Hybrid relevance: BM25F-style lexical evidence plus dense cosine similarity,
 * combined into an absolute score in [0,1] that needs no other result to mean
 * something (no division by the best hit).
 */

/** BM25 term-frequency saturation and length normalisation (Robertson's defaults). */
export const BM25_K1 = 1.2;
export const BM25_B = 0.75;
/**
 * Length of a typical entry in weighted terms (a one-line question counted twice
 * plus a paragraph of answer). Fixed rather than measured, so an entry's sparse
 * vector never changes when other entries come and go (Qdrant stores it as is).
 */
export const AVG_DOC_LENGTH = 64;
/** The question says what an entry is about; its terms count twice (BM25F field weight). */
export const QUESTION_WEIGHT = 2;
export const ANSWER_WEIGHT = 1;
/** Long queries are scored on their first distinct terms only (bounds the work per query). */
export const MAX_QUERY_TERMS = 64;

/** Share of the dense similarity in the relevance; the rest is lexical. */
export const DENSE_WEIGHT = 0.5;
/**
 * Calibration curve: relevance 0.4 maps to score 0.5. With the built-in embeddings an
 * entry whose question is the query itself has relevance ≈0.8 (score ≈0.98); half of
 * that is where a match is as likely as not to answer the query.
 */
export const CALIBRATION_MIDPOINT = 0.4;
export const CALIBRATION_SLOPE = 0.1;
/** Results scoring below this share nothing meaningful with the query and are dropped. */
export const MIN_SCORE = 0.01;

/** Robertson–Spärck Jones IDF as used by Lucene and Qdrant: always positive. */
export function idf(docCount: number, documentFrequency: number): number {
  const n = Math.min(documentFrequency, docCount);
  return Math.log(1 + (docCount - n + 0.5) / (n + 0.5));
}

/** The question-side text of an entry: tags describe the topic as the question does. */
export function questionText(entry: EntryText): string {
  return entry.tags.length > 0 ? `${entry.question}\n${entry.tags.join(' ')}` : entry.question;
}

export interface DocumentTerms {
  sparse: SparseVector;
  /** Distinct terms. */
  terms: string[];
}

/**
 * The sparse vector of an entry: per term, BM25's saturated and length-normalised
 * term frequency over the weighted fields. IDF is left out: it is applied at query
 * time (Qdrant's `idf` modifier, or the embedded index's own statistics).
 */
export function documentTerms(entry: EntryText): DocumentTerms {
  const weighted = new Map<string, number>();
  let length = 0;
  for (const t of terms(questionText(entry))) {
    weighted.set(t, (weighted.get(t) ?? 0) + QUESTION_WEIGHT);
    length += QUESTION_WEIGHT;
  }
  for (const t of terms(entry.answer)) {
    weighted.set(t, (weighted.get(t) ?? 0) + ANSWER_WEIGHT);
    length += ANSWER_WEIGHT;
  }
  const norm = BM25_K1 * (1 - BM25_B + (BM25_B * length) / AVG_DOC_LENGTH);
  const byId = new Map<number, number>();
  for (const [t, tf] of weighted) {
    const id = termId(t);
    // Two terms hashing to one id (rare) share a dimension, as in any hashed sparse model.
    byId.set(id, (byId.get(id) ?? 0) + tf);
  }
  const ids = [...byId.keys()].sort((a, b) => a - b);
  const values = ids.map((id) => {
    const tf = byId.get(id)!;
    return (tf * (BM25_K1 + 1)) / (tf + norm);
  });
  return { sparse: { indices: ids, values }, terms: [...weighted.keys()] };
}

/** The distinct terms of a query with their counts, at most MAX_QUERY_TERMS. */
export function queryTerms(text: string): QueryTerm[] {
  const out: QueryTerm[] = [];
  for (const [term, count] of termCounts(terms(text))) {
    if (out.length >= MAX_QUERY_TERMS) break;
    out.push({ term, id: termId(term), count });
  }
  return out;
}

/** The query as a sparse vector (indices ascending, values = counts). */
export function querySparseVector(query: QueryTerm[]): SparseVector {
  const byId = new Map<number, number>();
  for (const t of query) byId.set(t.id, (byId.get(t.id) ?? 0) + t.count);
  const indices = [...byId.keys()].sort((a, b) => a - b);
  return { indices, values: indices.map((i) => byId.get(i)!) };
}

/** Value of dimension `id` in a sparse vector (binary search), 0 when absent. */
export function sparseValue(vector: SparseVector, id: number): number {
  const { indices, values } = vector;
  let lo = 0;
  let hi = indices.length - 1;
  while (lo <= hi) {
    const mid = (lo + hi) >> 1;
    const v = indices[mid]!;
    if (v === id) return values[mid]!;
    if (v < id) lo = mid + 1;
    else hi = mid - 1;
  }
  return 0;
}

export function dot(a: ArrayLike<number>, b: ArrayLike<number>): number {
  const n = Math.min(a.length, b.length);
  let s = 0;
  for (let i = 0; i < n; i++) s += a[i]! * b[i]!;
  return s;
}

/** IDF of each query term, in the query's order. */
export function termIdfs(
  query: readonly QueryTerm[],
  stats: Pick<CandidateSet, 'docCount' | 'documentFrequency'>,
): Float64Array {
  const out = new Float64Array(query.length);
  for (let t = 0; t < query.length; t++)
    out[t] = idf(stats.docCount, stats.documentFrequency.get(query[t]!.id) ?? 0);
  return out;
}

/**
 * BM25 of an entry for the query: Σ over the query's terms, in their order, of count × IDF ×
 * the entry's weight for the term (`weightOf(t)` for the query's term t, 0 when it lacks it),
 * `idfs[t]` that term's IDF (termIdfs). The order is part of the value: an index that sums
 * the terms itself adds them in this order, so every index gives the same doubles.
 */
export function bm25Score(
  query: readonly QueryTerm[],
  idfs: Float64Array,
  weightOf: (t: number) => number,
): number {
  let score = 0;
  for (let t = 0; t < query.length; t++) score += query[t]!.count * idfs[t]! * weightOf(t);
  return score;
}

/** The most BM25 the query could score on any entry: every term present, frequency saturated. */
export function maxBm25(query: readonly QueryTerm[], idfs: Float64Array): number {
  let max = 0;
  for (let t = 0; t < query.length; t++) max += query[t]!.count * idfs[t]! * (BM25_K1 + 1);
  return max;
}

/**
 * An entry's BM25 divided by the most the query could score (maxBm25): the IDF-weighted share
 * of the query that the entry covers, in [0,1).
 */
export function lexicalSimilarity(bm25: number, max: number): number {
  return max > 0 ? bm25 / max : 0;
}

/** Cosine similarity rescaled so the provider's "unrelated" level is 0 and "identical" is 1. */
export function denseSimilarity(cosine: number, range: EmbeddingProvider['cosineRange']): number {
  const x = (cosine - range.unrelated) / (range.identical - range.unrelated);
  return Math.min(1, Math.max(0, x));
}

const sigmoid = (x: number): number => 1 / (1 + Math.exp(-x));
const CAL_LOW = sigmoid(-CALIBRATION_MIDPOINT / CALIBRATION_SLOPE);
const CAL_HIGH = sigmoid((1 - CALIBRATION_MIDPOINT) / CALIBRATION_SLOPE);

/** Maps relevance in [0,1] onto a score in [0,1] (logistic, pinned at both ends). */
export function calibrate(relevance: number): number {
  const r = Math.min(1, Math.max(0, relevance));
  return (sigmoid((r - CALIBRATION_MIDPOINT) / CALIBRATION_SLOPE) - CAL_LOW) / (CAL_HIGH - CAL_LOW);
}

/** Combined relevance; without a query embedding it is lexical only. */
export function relevance(lexical: number, dense: number | null): number {
  return dense === null ? lexical : DENSE_WEIGHT * dense + (1 - DENSE_WEIGHT) * lexical;
}

export interface ScoredEntry {
  candidate: Candidate;
  score: number;
}

/** Scores are reported to 6 decimals and ranked by that reported value, ties by entry id. */
export const round6 = (x: number): number => Math.round(x * 1e6) / 1e6;

/**
 * Ranks candidates by the first stage alone (calibrated hybrid relevance): best first, ties
 * by entry id, at most `limit`.
 */
export function rankCandidates(
  query: { terms: QueryTerm[]; dense: Float32Array | null },
  set: CandidateSet,
  cosineRange: EmbeddingProvider['cosineRange'],
  limit: number,
): ScoredEntry[] {
  const max = maxBm25(query.terms, termIdfs(query.terms, set));
  const scored: { k: number; score: number }[] = [];
  for (let k = 0; k < set.size; k++) {
    const lexical = lexicalSimilarity(set.bm25[k]!, max);
    const dense = query.dense && set.cosines ? denseSimilarity(set.cosines[k]!, cosineRange) : null;
    const score = round6(calibrate(relevance(lexical, dense)));
    if (score >= MIN_SCORE) scored.push({ k, score });
  }
  scored.sort((a, b) => b.score - a.score || compareIds(set.idOf(a.k), set.idOf(b.k)));
  return scored.slice(0, limit).map(({ k, score }) => ({ candidate: set.candidate(k), score }));
}

/** Code-unit order, the same in every process and locale. */
export function compareIds(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
