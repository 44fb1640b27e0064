import { profileFromText } from './entry-profile.js';
import { bestOf, firstStage } from './first-stage.js';
import type { Candidate, CandidateSet, EmbeddingProvider, QueryTerm } from './ports.js';
import { QueryWords } from './question-match.js';
import { round6, MIN_SCORE } from './scoring.js';

/**
 * Second stage of search: the best `depth` candidates of the hybrid first stage are
 * reranked by a linear model over a handful of features, and its score is calibrated
 * (logistic) into an estimate of the probability that the entry answers the query.
 * Both are fitted offline by `npm run fit:confidence`; the weights are in
 * rerank-model.json. Features read only what the index returns with a candidate plus
 * the entry's question and answer text, so both index adapters score alike.
 */

/** The features of a (query, candidate) pair, in the order the model's weights use. */
export const RERANK_FEATURES = [
  /** BM25F share of the query covered by the entry (question and answer), 0–1. */
  'lexical',
  /** Dense similarity of query and entry, rescaled to the provider's range, 0–1. */
  'dense',
  /** IDF-weighted share of the query's terms found in the entry's question, 0–1. */
  'queryCoverage',
  /** Share of the entry question's terms found in the query, 0–1. */
  'questionCoverage',
  /** Cosine of character trigrams of query and entry question, 0–1. */
  'questionChars',
  /** IDF-weighted share of the query's terms found in the entry's answer, 0–1. */
  'answerCoverage',
  /** The best `lexical` among the reranked entries with the same question (other answers to it). */
  'sameQuestionLexical',
  /** log2(1 + rank) of the entry among the candidates by lexical similarity (ties share a rank). */
  'lexicalRank',
  /** log2(1 + rank) among the candidates by dense similarity. */
  'denseRank',
] as const;
export type RerankFeature = (typeof RERANK_FEATURES)[number];

/** A linear ranking function over named features (fitted listwise: softmax over a query's candidates). */
export interface LinearRanker {
  features: string[];
  weights: number[];
}

/** One model: a ranker, then a logistic calibration of its score into a probability. */
export interface RerankStage {
  ranker: LinearRanker;
  /**
   * P(relevant) = σ(bias + score·rankingScore + gap·competitorGap): monotone in both, so
   * the calibrated scores keep the ranker's order among answers to one question.
   */
  calibration: { bias: number; score: number; gap: number };
}

export interface RerankModel {
  /** Candidates (best of the first stage) rescored per query. */
  depth: number;
  /** With a query embedding. */
  hybrid: RerankStage;
  /** Without one (provider down): fitted without the dense features. */
  lexicalOnly: RerankStage;
}

export interface RerankQuery {
  terms: QueryTerm[];
  dense: Float32Array | null;
}

/** A candidate with its first-stage score and reranking features. */
export interface FeatureRow {
  candidate: Candidate;
  /** Identifies the entry's question: answers to one question do not compete (competitorGaps). */
  questionKey: number;
  /** First-stage (hybrid) relevance, 0–1: decides which candidates are reranked. */
  firstStage: number;
  features: Record<RerankFeature, number>;
}

export interface RankedEntry {
  candidate: Candidate;
  /** Probability that the entry answers the query, 0–1, to 6 decimals. */
  score: number;
}

/**
 * Feature rows of the `depth` best candidates by first-stage relevance (ties by entry id).
 * `exclude` drops entries (by id) before anything is computed (the fitting script uses it to
 * simulate a KB that does not cover a query).
 */
export function featureRows(
  query: RerankQuery,
  set: CandidateSet,
  cosineRange: EmbeddingProvider['cosineRange'],
  depth: number,
  exclude?: (entryId: string) => boolean,
): FeatureRow[] {
  const first = firstStage(query, set, cosineRange, depth, exclude);
  const { idfs, lexical, dense } = first;

  // Query terms are distinct (queryTerms); each weighs its IDF in the coverage features.
  let totalWeight = 0;
  for (const w of idfs) totalWeight += w;
  const words = new QueryWords(query.terms.map((t) => t.term));
  const held = new Uint8Array(query.terms.length);
  const candidates = first.best.map((i) => set.candidate(first.kept[i]!));
  const profiles = candidates.map((c) => c.profile ?? profileFromText(c.entry));
  const bestLexical = new Map<number, number>();
  first.best.forEach((i, r) => {
    const key = profiles[r]!.questionKey;
    bestLexical.set(key, Math.max(bestLexical.get(key) ?? 0, lexical[i]!));
  });
  return first.best.map((i, r) => {
    const profile = profiles[r]!;
    const questionTerms = profile.questionTerms;
    held.fill(0);
    const gramDot = words.compare(questionTerms, held);
    // IDF-weighted shares of the query found in the question and in the answer, summed in
    // query order; and how many of the question's distinct terms the query holds.
    let inQuestion = 0;
    let inAnswer = 0;
    for (let j = 0; j < query.terms.length; j++) {
      if (held[j] === 1) inQuestion += idfs[j]!;
      if (profile.inAnswer(query.terms[j]!, j)) inAnswer += idfs[j]!;
    }
    return {
      candidate: candidates[r]!,
      questionKey: profile.questionKey,
      firstStage: first.relevance[i]!,
      features: {
        lexical: lexical[i]!,
        dense: dense ? dense[i]! : 0,
        queryCoverage: totalWeight > 0 ? inQuestion / totalWeight : 0,
        questionCoverage:
          questionTerms.ids.length > 0 ? words.shared / questionTerms.ids.length : 0,
        questionChars: words.charsCosine(gramDot, profile.questionGramNorm2),
        answerCoverage: totalWeight > 0 ? inAnswer / totalWeight : 0,
        sameQuestionLexical: bestLexical.get(profile.questionKey)!,
        lexicalRank: Math.log2(1 + first.lexicalRank[r]!),
        denseRank: Math.log2(1 + first.denseRank[r]!),
      },
    };
  });
}

/** Largest |gap| the calibration reads: beyond it the evidence no longer grows. */
export const GAP_CAP = 4;

const sigmoid = (x: number): number => 1 / (1 + Math.exp(-x));

/** The ranking score of a row: Σ weight·feature (no bias: only differences matter). */
export function rankingScore(ranker: LinearRanker, features: Record<string, number>): number {
  let s = 0;
  for (let i = 0; i < ranker.features.length; i++)
    s += ranker.weights[i]! * (features[ranker.features[i]!] ?? 0);
  return s;
}

/**
 * For each row: its ranking score minus the best score of a row with a different
 * question (capped to ±GAP_CAP; GAP_CAP when no other question competes). Answers to
 * the same question do not compete with each other; other questions do.
 */
export function competitorGaps(rows: { question: unknown; score: number }[]): number[] {
  return rows.map((r) => {
    let best = -Infinity;
    for (const o of rows) if (o.question !== r.question && o.score > best) best = o.score;
    const gap = best === -Infinity ? GAP_CAP : r.score - best;
    return Math.min(GAP_CAP, Math.max(-GAP_CAP, gap));
  });
}

/** P(relevant) from a ranking score and its competitor gap. */
export function calibrated(stage: RerankStage, score: number, gap: number): number {
  const c = stage.calibration;
  return sigmoid(c.bias + c.score * score + c.gap * gap);
}

/** Rescores feature rows with the model; best first, ties by entry id, at most `limit`. */
export function rerank(
  model: RerankModel,
  rows: FeatureRow[],
  hasDense: boolean,
  limit: number,
): RankedEntry[] {
  const stage = hasDense ? model.hybrid : model.lexicalOnly;
  const scored = rows.map((r) => ({
    question: r.questionKey,
    score: rankingScore(stage.ranker, r.features),
  }));
  const gaps = competitorGaps(scored);
  // The best `limit` picked as the first stage picks its depth (bestOf: each row compared with
  // the few kept, not all rows sorted); rows under the floor cannot be picked over any other.
  const scores = rows.map((_, i) => {
    const score = round6(calibrated(stage, scored[i]!.score, gaps[i]!));
    return score >= MIN_SCORE ? score : -Infinity;
  });
  return bestOf(scores, (i) => rows[i]!.candidate.entry.id, limit)
    .filter((i) => scores[i]! >= MIN_SCORE)
    .map((i) => ({ candidate: rows[i]!.candidate, score: scores[i]! }));
}

/** Checks a model read from JSON: known features, finite weights, one weight per feature. */
export function checkRerankModel(raw: unknown): RerankModel {
  const m = raw as Partial<RerankModel>;
  if (!m || typeof m !== 'object' || !Number.isInteger(m.depth) || (m.depth ?? 0) < 1)
    throw new Error('rerank model: depth must be a positive integer');
  for (const key of ['hybrid', 'lexicalOnly'] as const) checkStage(m[key], `rerank model ${key}`);
  return m as RerankModel;
}

function checkStage(raw: unknown, what: string): void {
  const stage = raw as Partial<RerankStage> | undefined;
  const c = stage?.calibration;
  if (!isLinear(stage?.ranker))
    throw new Error(`${what}: the ranker needs known features with one finite weight each`);
  if (!c || ![c.bias, c.score, c.gap].every(Number.isFinite))
    throw new Error(`${what}: the calibration needs finite bias, score and gap`);
}

function isLinear(raw: Partial<LinearRanker> | undefined): boolean {
  const known = new Set<string>(RERANK_FEATURES);
  return (
    raw !== undefined &&
    Array.isArray(raw.features) &&
    Array.isArray(raw.weights) &&
    raw.features.length === raw.weights.length &&
    raw.features.every((f) => known.has(f)) &&
    raw.weights.every(Number.isFinite)
  );
}
