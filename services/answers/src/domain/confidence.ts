import raw from './confidence-model.json' with { type: 'json' };
import type { AnswerDraft, KbHit } from './ports.js';

/**
 * The confidence of an answer: an estimate, in percent, of the probability that the
 * answer is right (the entry it cites first answers the question). A logistic model
 * over what the service knows when it answers, fitted offline by
 * `npm run fit:confidence` (weights in confidence-model.json): among answers with
 * confidence 80, about 80 in 100 are right. Knowledge's hit scores are themselves
 * calibrated probabilities that the entry answers the query, so the top score is the
 * main feature.
 */

/** The features of an answer, in the order the model's weights use. */
export const ANSWER_FEATURES = [
  /** logit of the first cited entry's score (its probability of answering the query). */
  'citedLogit',
  /** logit of the best score of a hit with a different question (0.0001 when none). */
  'rivalLogit',
  /** Hits at or above the relevance floor, other than the cited one. */
  'otherRelevant',
  /** log2(1 + length of the cited entry's answer in hundreds of characters). */
  'answerLength',
] as const;
export type AnswerFeature = (typeof ANSWER_FEATURES)[number];

export interface ConfidenceModel {
  features: string[];
  weights: number[];
  bias: number;
  /**
   * A hit whose score (probability of answering the query) is below this is not
   * offered as an answer: the reply says the KB has nothing.
   */
  relevanceFloor: number;
}

/** Scores are kept this far from 0 and 1 before taking logits. */
const EPS = 1e-4;

const logit = (p: number): number => {
  const q = Math.min(1 - EPS, Math.max(EPS, Number.isFinite(p) ? p : 0));
  return Math.log(q / (1 - q));
};
const sigmoid = (x: number): number => 1 / (1 + Math.exp(-x));

export function checkConfidenceModel(value: unknown): ConfidenceModel {
  const m = value as Partial<ConfidenceModel> | undefined;
  const known = new Set<string>(ANSWER_FEATURES);
  if (
    !m ||
    !Array.isArray(m.features) ||
    !Array.isArray(m.weights) ||
    m.features.length !== m.weights.length ||
    !m.features.every((f) => known.has(f)) ||
    !m.weights.every(Number.isFinite) ||
    !Number.isFinite(m.bias) ||
    !Number.isFinite(m.relevanceFloor) ||
    m.relevanceFloor! < 0 ||
    m.relevanceFloor! > 1
  )
    throw new Error(
      'confidence model: expected known features, one finite weight each, a bias and a relevanceFloor in [0,1]',
    );
  return m as ConfidenceModel;
}

/** The shipped model (fitted by scripts/fit-confidence.ts). */
export const CONFIDENCE_MODEL: ConfidenceModel = checkConfidenceModel(raw as unknown);

/** The probability floor below which a hit is not offered as an answer. */
export const RELEVANCE_FLOOR = CONFIDENCE_MODEL.relevanceFloor;
/** A first cited entry at or above this probability answers the question (answered_fully). */
export const ANSWERS_FULLY_SCORE = 0.75;

/** Features of an answer citing `citedId` first, given every hit of the question. */
export function answerFeatures(
  hits: KbHit[],
  citedId: string,
  floor: number = RELEVANCE_FLOOR,
): Record<AnswerFeature, number> {
  const cited = hits.find((h) => h.entryId === citedId);
  let rival = 0;
  let otherRelevant = 0;
  for (const h of hits) {
    if (h.entryId === citedId) continue;
    if (h.score >= floor) otherRelevant++;
    if (h.question !== cited?.question) rival = Math.max(rival, h.score);
  }
  return {
    citedLogit: logit(cited?.score ?? 0),
    rivalLogit: logit(rival),
    otherRelevant,
    answerLength: Math.log2(1 + (cited?.answer.length ?? 0) / 100),
  };
}

/** σ(bias + Σ weight·feature), 0–1. */
export function answerProbability(
  model: ConfidenceModel,
  features: Record<AnswerFeature, number>,
): number {
  let z = model.bias;
  for (let i = 0; i < model.features.length; i++)
    z += model.weights[i]! * features[model.features[i] as AnswerFeature];
  return sigmoid(z);
}

/**
 * The confidence of a generated answer, an integer 0–100 (README "Confidence"):
 * - nothing relevant, or an answer citing nothing: 0;
 * - otherwise round(100 × P(right)) from the model, for the entry cited first;
 * - an LLM's self-assessed support can only lower it (min of the two): the model was
 *   not fitted on LLM answers, so a confident LLM adds no evidence it could weigh.
 */
export function answerConfidence(
  hits: KbHit[],
  draft: AnswerDraft | null,
  model: ConfidenceModel = CONFIDENCE_MODEL,
): number {
  const first = draft?.citedEntryIds[0];
  if (draft === null || first === undefined) return 0;
  const p = answerProbability(model, answerFeatures(hits, first, model.relevanceFloor));
  const percent = Math.round(100 * p);
  if (draft.support === null) return percent;
  const support = Number.isFinite(draft.support) ? Math.min(100, Math.max(0, draft.support)) : 0;
  return Math.min(percent, Math.round(support));
}
