import type { AnswerDraft, KbHit } from './ports.js';
import { jaccard, termSet } from './text.js';

/** Below this top score no entry is considered relevant: the answer says the KB has nothing. */
export const RELEVANCE_FLOOR = 0.35;
/** A top score at or above this means the entry answers the question (extractive answered_fully). */
export const ANSWERS_FULLY_SCORE = 0.75;
/** A margin this large over the runner-up counts as a clear winner. */
const CLEAR_MARGIN = 0.15;
/** Weight of the model's self-assessment when an LLM wrote the answer. */
const LLM_SUPPORT_WEIGHT = 0.5;

/**
 * How decisive retrieval is, 0–1: 1 when the top hit is alone or clearly ahead
 * (margin ≥ CLEAR_MARGIN over the second), or when the runner-up agrees with it
 * (their answers share most terms, so ambiguity does not matter). Otherwise the
 * larger of the normalised margin and the agreement.
 */
export function decisiveness(hits: KbHit[]): number {
  const [top, second] = hits;
  if (!top || !second || second.score < RELEVANCE_FLOOR) return 1;
  const margin = Math.min(1, Math.max(0, top.score - second.score) / CLEAR_MARGIN);
  const agreement = Math.min(1, jaccard(termSet(top.answer), termSet(second.answer)) / 0.6);
  return Math.max(margin, agreement);
}

/**
 * Confidence from retrieval alone, 0–100: the top score, discounted by up to a
 * quarter when a different-looking runner-up is nearly as good:
 *   retrieval = 100 × top × (0.75 + 0.25 × decisiveness)
 */
export function retrievalConfidence(hits: KbHit[]): number {
  const top = hits[0];
  if (!top) return 0;
  return 100 * clamp01(top.score) * (0.75 + 0.25 * decisiveness(hits));
}

/**
 * The confidence of a generated answer, an integer 0–100 (README "Confidence"):
 * - nothing relevant (top score below RELEVANCE_FLOOR): 30 × top, i.e. at most 10;
 * - an answer that cites nothing: 0;
 * - built-in extractive provider: the retrieval confidence (deterministic);
 * - LLM: the mean of retrieval confidence and the model's self-assessed support.
 */
export function answerConfidence(hits: KbHit[], draft: AnswerDraft | null): number {
  const top = hits[0];
  if (!top || top.score < RELEVANCE_FLOOR || draft === null)
    return Math.round(30 * clamp01(top?.score ?? 0));
  if (draft.citedEntryIds.length === 0) return 0;
  const retrieval = retrievalConfidence(hits);
  if (draft.support === null) return Math.round(retrieval);
  const blended =
    (1 - LLM_SUPPORT_WEIGHT) * retrieval + LLM_SUPPORT_WEIGHT * clampScore(draft.support);
  return Math.round(blended);
}

function clamp01(x: number): number {
  return Number.isFinite(x) ? Math.min(1, Math.max(0, x)) : 0;
}

function clampScore(x: number): number {
  return Number.isFinite(x) ? Math.min(100, Math.max(0, x)) : 0;
}
