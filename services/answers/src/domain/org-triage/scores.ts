// Per-category precision, recall and F1 of a classification, for any set of category names:
// the report of a training run, and eval:triage on an organization's own categories.

export interface CategoryScore {
  category: string;
  precision: number;
  recall: number;
  f1: number;
  support: number;
}

export interface CategoryScores {
  /** Mean F1 over the categories that have examples. */
  macroF1: number;
  accuracy: number;
  categories: CategoryScore[];
  /** confusion[label][prediction], in category order. */
  confusion: number[][];
}

/** Scores of predictions (category indexes) against the gold ones. */
export function categoryScores(
  categories: readonly string[],
  gold: readonly number[],
  predicted: readonly number[],
): CategoryScores {
  const k = categories.length;
  const confusion = Array.from({ length: k }, () => new Array<number>(k).fill(0));
  gold.forEach((g, i) => confusion[g]![predicted[i]!]!++);
  const scores = categories.map((category, c) => {
    const tp = confusion[c]![c]!;
    const predictedC = confusion.reduce((s, row) => s + row[c]!, 0);
    const support = confusion[c]!.reduce((s, n) => s + n, 0);
    const precision = predictedC ? tp / predictedC : 0;
    const recall = support ? tp / support : 0;
    const f1 = precision + recall ? (2 * precision * recall) / (precision + recall) : 0;
    return { category, precision, recall, f1, support };
  });
  const scored = scores.filter((s) => s.support > 0);
  const right = gold.filter((g, i) => g === predicted[i]).length;
  return {
    macroF1: scored.reduce((s, c) => s + c.f1, 0) / Math.max(1, scored.length),
    accuracy: right / Math.max(1, gold.length),
    categories: scores,
    confusion,
  };
}
