// Cross-validation of the triage classifier on the project's own examples only.
import { readFileSync } from 'node:fs';
import { classify, type FeatureVector, type TriageModel } from '../src/domain/classifier.js';
import type { Category } from '../src/domain/ports.js';
import type { Example } from './dataset.js';
import { trainModel, type TrainOptions } from './model.js';
import { fold, FOLDED, scoreFolded, type Folded, type FoldedScores } from './scores.js';

export interface Scores extends FoldedScores {
  /** Exact five-category accuracy (absent when the labels are the three classes only). */
  accuracy5?: number;
  n: number;
}

export function score(gold: Category[], predicted: Category[]): Scores {
  return {
    ...scoreFolded(gold.map(fold), predicted.map(fold)),
    accuracy5: gold.filter((g, i) => g === predicted[i]).length / Math.max(1, gold.length),
    n: gold.length,
  };
}

export function formatScores(name: string, s: Scores): string {
  const f = (x: number) => x.toFixed(3);
  const rows = FOLDED.map((g) => `${g}→${FOLDED.map((p) => s.confusion[g][p]).join('/')}`);
  const f1 = (c: (typeof FOLDED)[number]) => f(s.perClass[c].f1);
  return (
    `${name}: macro-F1 ${f(s.macroF1)} (bug ${f1('bug')}, feature ${f1('feature')}, ` +
    `question ${f1('question')}), ` +
    (s.accuracy5 === undefined ? '' : `5-category accuracy ${f(s.accuracy5)}, `) +
    `n ${s.n}; ` +
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

/**
 * Scores a model on labelled issues, `{title, body, label: bug|feature|question, repo?}` per
 * line (training/dev/issues.jsonl), overall and per `repo` (the dev set's subsets).
 */
export function devScores(model: TriageModel, file: string): Array<[string, Scores]> {
  const rows = readFileSync(file, 'utf8')
    .split('\n')
    .filter((l) => l.trim())
    .map((l) => JSON.parse(l) as { title?: string; body?: string; label: Folded; repo?: string });
  const predicted = rows.map((r) =>
    fold(classify(model, `${r.title ?? ''}\n\n${r.body ?? ''}`).category),
  );
  const subsets = ['all', ...new Set(rows.flatMap((r) => (r.repo ? [r.repo] : [])))];
  return subsets.map((subset) => {
    const idx = rows.flatMap((r, i) => (subset === 'all' || r.repo === subset ? [i] : []));
    const gold = idx.map((i) => rows[i]!.label);
    const s = scoreFolded(
      gold,
      idx.map((i) => predicted[i]!),
    );
    return [subset, { ...s, n: idx.length }];
  });
}
