// Scores of the triage classifier over the three classes most trackers (and NLBSE'24) use;
// shared by the training cross-validation and scripts/eval-triage.ts.
import { classScores, type ClassScores } from '@support-agent/quality';
import type { Category } from '../src/domain/ports.js';

export const FOLDED = ['bug', 'feature', 'question'] as const;
export type Folded = (typeof FOLDED)[number];

/** bug → bug, feature_request → feature, the three question kinds → question. */
export const fold = (c: Category): Folded =>
  c === 'bug' ? 'bug' : c === 'feature_request' ? 'feature' : 'question';

export type FoldedScores = ClassScores<Folded>;

export const scoreFolded = (gold: Folded[], predicted: Folded[]): FoldedScores =>
  classScores(FOLDED, gold, predicted);
