// Fits a TriageModel on featurized examples.
import type { FeatureConfig, FeatureVector, TriageModel } from '../src/domain/classifier.js';
import { CATEGORIES, type Category } from '../src/domain/ports.js';
import type { WordVectors } from '../src/domain/word-vectors.js';
import { type Example, toData, vocabulary, type VocabularyOptions } from './dataset.js';
import { fitSoftmax } from '../src/domain/org-triage/fit-softmax.js';

export interface TrainOptions extends VocabularyOptions {
  features: FeatureConfig;
  l2: number;
  /**
   * l2 multiplier per feature family (`h`, `t`, `l`, `w`, `c`): the hand-designed cues say
   * the same thing in any product's tickets; the words of generated tickets partly say
   * "this template", so they are held back harder.
   */
  l2ByFamily: Record<string, number>;
  epochs: number;
  learningRate: number;
  /**
   * Loss weight of a hand-written example relative to a generated one (1 when absent):
   * written by people in their own words, they are closer to real tickets than any template.
   */
  handWeight?: number;
  /** The word-vector table, when o.features reads vectors; attached to the trained model. */
  wordVectors?: WordVectors;
}

/**
 * Share of the loss per class: bug, feature request and "question" (how-to +
 * general question + documentation) a third each, so the top-down decision (bug vs
 * feature vs the summed question kinds) starts even; within the questions, by how
 * often each kind is asked (how-to most, documentation least).
 */
const SHARE: Record<Category, number> = {
  bug: 1 / 3,
  feature_request: 1 / 3,
  how_to: 0.6 / 3,
  general_question: 0.25 / 3,
  documentation: 0.15 / 3,
};
export const CLASS_SHARE = CATEGORIES.map((c) => SHARE[c]);

const round = (x: number) => Math.round(x * 10_000) / 10_000;

/** Trains on `examples` (their vectors given, featurized with o.features). */
export function trainModel(
  examples: Example[],
  vectors: FeatureVector[],
  o: TrainOptions,
  log: (line: string) => void = () => {},
): TriageModel {
  const features = vocabulary(vectors, examples, o);
  const data = toData(
    vectors,
    examples.map((e) => e.label),
    features,
    examples.map((e) => (e.source === 'hand' ? (o.handWeight ?? 1) : 1)),
  );
  const K = CATEGORIES.length;
  const { w, b } = fitSoftmax(data, {
    classes: K,
    features: features.length,
    l2: o.l2,
    l2Scale: Float32Array.from(features, (f) => o.l2ByFamily[f.slice(0, f.indexOf(':'))] ?? 1),
    epochs: o.epochs,
    learningRate: o.learningRate,
    classShare: CLASS_SHARE,
    progress: (epoch, loss) => log(`  epoch ${epoch}: loss ${loss.toFixed(4)}`),
  });
  const weights: Record<string, number[]> = {};
  features.forEach((f, i) => {
    const row = Array.from(w.subarray(i * K, (i + 1) * K), round);
    if (row.some((x) => x !== 0)) weights[f] = row;
  });
  return {
    version: 2,
    classes: [...CATEGORIES],
    features: o.features,
    bias: Array.from(b, round),
    weights,
    ...(o.wordVectors ? { wordVectors: o.wordVectors } : {}),
  };
}
