/** Per-class and overall scores of a classifier on labelled examples. */
export interface ClassScores<C extends string> {
  perClass: Record<C, { precision: number; recall: number; f1: number; support: number }>;
  macroF1: number;
  accuracy: number;
  /** confusion[label][prediction]. */
  confusion: Record<C, Record<C, number>>;
}

/**
 * Precision, recall and F1 per class, their macro average and accuracy, with the confusion
 * matrix, of `predicted` against `gold` (same order). A class never predicted (or never
 * present) scores 0 rather than NaN.
 */
export function classScores<C extends string>(
  classes: readonly C[],
  gold: C[],
  predicted: C[],
): ClassScores<C> {
  const confusion = Object.fromEntries(
    classes.map((g) => [g, Object.fromEntries(classes.map((p) => [p, 0]))]),
  ) as ClassScores<C>['confusion'];
  gold.forEach((g, i) => confusion[g][predicted[i]!]++);
  const perClass = {} as ClassScores<C>['perClass'];
  for (const c of classes) {
    const tp = confusion[c][c];
    const predictedC = classes.reduce((s, g) => s + confusion[g][c], 0);
    const support = classes.reduce((s, p) => s + confusion[c][p], 0);
    const precision = predictedC ? tp / predictedC : 0;
    const recall = support ? tp / support : 0;
    const f1 = precision + recall ? (2 * precision * recall) / (precision + recall) : 0;
    perClass[c] = { precision, recall, f1, support };
  }
  const macroF1 = classes.reduce((s, c) => s + perClass[c].f1, 0) / classes.length;
  const accuracy = gold.filter((g, i) => g === predicted[i]).length / Math.max(1, gold.length);
  return { perClass, macroF1, accuracy, confusion };
}
