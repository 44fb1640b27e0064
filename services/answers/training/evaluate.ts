// Cross-validation of the triage classifier on the project's own examples only.
import { classify, type FeatureVector } from '../src/domain/classifier.js';
import type { Category } from '../src/domain/ports.js';
import type { Example } from './dataset.js';
import { trainModel, type TrainOptions } from './model.js';

/** The three classes the NLBSE'24 labels and most trackers use; the question kinds fold into one. */
export const FOLDED = ['bug', 'feature', 'question'] as const;
export type Folded = (typeof FOLDED)[number];
export const fold = (c: Category): Folded =>
  c === 'bug' ? 'bug' : c === 'feature_request' ? 'feature' : 'question';

export interface Scores {
  f1: Record<Folded, number>;
  macroF1: number;
  /** Exact five-category accuracy. */
  accuracy5: number;
  /** confusion[label][prediction], folded. */
  confusion: Record<Folded, Record<Folded, number>>;
  n: number;
}

export function score(gold: Category[], predicted: Category[]): Scores {
  const confusion = Object.fromEntries(
    FOLDED.map((g) => [g, Object.fromEntries(FOLDED.map((p) => [p, 0]))]),
  ) as Scores['confusion'];
  gold.forEach((g, i) => confusion[fold(g)][fold(predicted[i]!)]++);
  const f1 = {} as Record<Folded, number>;
  for (const c of FOLDED) {
    const tp = confusion[c][c];
    const predictedC = FOLDED.reduce((s, g) => s + confusion[g][c], 0);
    const support = FOLDED.reduce((s, p) => s + confusion[c][p], 0);
    const p = predictedC ? tp / predictedC : 0;
    const r = support ? tp / support : 0;
    f1[c] = p + r ? (2 * p * r) / (p + r) : 0;
  }
  return {
    f1,
    macroF1: FOLDED.reduce((s, c) => s + f1[c], 0) / FOLDED.length,
    accuracy5: gold.filter((g, i) => g === predicted[i]).length / Math.max(1, gold.length),
    confusion,
    n: gold.length,
  };
}

export function formatScores(name: string, s: Scores): string {
  const f = (x: number) => x.toFixed(3);
  const rows = FOLDED.map((g) => `${g}→${FOLDED.map((p) => s.confusion[g][p]).join('/')}`);
  return (
    `${name}: macro-F1 ${f(s.macroF1)} (bug ${f(s.f1.bug)}, feature ${f(s.f1.feature)}, ` +
    `question ${f(s.f1.question)}), 5-category accuracy ${f(s.accuracy5)}, n ${s.n}; ` +
    `confusion bug/feature/question ${rows.join(' ')}`
  );
}

function predict(
  train: number[],
  test: number[],
  examples: Example[],
  vectors: FeatureVector[],
  o: TrainOptions,
): Category[] {
  const model = trainModel(
    train.map((i) => examples[i]!),
    train.map((i) => vectors[i]!),
    o,
  );
  return test.map((i) => classify(model, examples[i]!.text).category);
}

/**
 * Two estimates of how the classifier does on tickets it was not trained on:
 * - generated → hand-written: trained on generated tickets only, tested on the
 *   hand-written examples (other authors, other wording);
 * - grouped k-fold: the generated tickets split by product domain (a fold's
 *   product vocabulary is never seen in training) and the hand-written ones by
 *   position, all kinds of ticket in every fold.
 */
export function crossValidate(
  examples: Example[],
  vectors: FeatureVector[],
  o: TrainOptions,
  k: number,
): { generatedToHand: Scores; grouped: Scores } {
  const all = examples.map((_, i) => i);
  const hand = all.filter((i) => examples[i]!.source === 'hand');
  const gen = all.filter((i) => examples[i]!.source !== 'hand');
  const generatedToHand = score(
    hand.map((i) => examples[i]!.label),
    predict(gen, hand, examples, vectors, o),
  );

  const domains = [...new Set(gen.map((i) => examples[i]!.source))].sort();
  let handSeen = 0;
  const foldOf = all.map((i) =>
    examples[i]!.source === 'hand' ? handSeen++ % k : domains.indexOf(examples[i]!.source) % k,
  );
  const gold: Category[] = [];
  const predicted: Category[] = [];
  for (let f = 0; f < k; f++) {
    const test = all.filter((i) => foldOf[i] === f);
    const train = all.filter((i) => foldOf[i] !== f);
    gold.push(...test.map((i) => examples[i]!.label));
    predicted.push(...predict(train, test, examples, vectors, o));
  }
  return { generatedToHand, grouped: score(gold, predicted) };
}
