// Scores of the triage classifier over the three classes most trackers (and NLBSE'24) use;
// shared by the training cross-validation and scripts/eval-triage.ts.
import type { Category } from '../src/domain/ports.js';

export const FOLDED = ['bug', 'feature', 'question'] as const;
export type Folded = (typeof FOLDED)[number];

/** bug → bug, feature_request → feature, the three question kinds → question. */
export const fold = (c: Category): Folded =>
  c === 'bug' ? 'bug' : c === 'feature_request' ? 'feature' : 'question';

export interface FoldedScores {
  perClass: Record<Folded, { precision: number; recall: number; f1: number; support: number }>;
  macroF1: number;
  accuracy: number;
  /** confusion[label][prediction]. */
  confusion: Record<Folded, Record<Folded, number>>;
}

export function scoreFolded(gold: Folded[], predicted: Folded[]): FoldedScores {
  const confusion = Object.fromEntries(
    FOLDED.map((g) => [g, Object.fromEntries(FOLDED.map((p) => [p, 0]))]),
  ) as FoldedScores['confusion'];
  gold.forEach((g, i) => confusion[g][predicted[i]!]++);
  const perClass = {} as FoldedScores['perClass'];
  for (const c of FOLDED) {
    const tp = confusion[c][c];
    const predictedC = FOLDED.reduce((s, g) => s + confusion[g][c], 0);
    const support = FOLDED.reduce((s, p) => s + confusion[c][p], 0);
    const precision = predictedC ? tp / predictedC : 0;
    const recall = support ? tp / support : 0;
    const f1 = precision + recall ? (2 * precision * recall) / (precision + recall) : 0;
    perClass[c] = { precision, recall, f1, support };
  }
  const macroF1 = FOLDED.reduce((s, c) => s + perClass[c].f1, 0) / FOLDED.length;
  const accuracy = gold.filter((g, i) => g === predicted[i]).length / Math.max(1, gold.length);
  return { perClass, macroF1, accuracy, confusion };
}
