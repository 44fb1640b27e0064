// Trains an organization's triage model on its own labelled tickets and reports how it does on
// tickets it was not trained on (k-fold cross-validation over the same examples). Pure CPU
// work: the training worker (entry-points/training-worker.ts) runs it in a child process at
// low priority, off the request path.
import { mulberry32 } from '@support-agent/shared';
import {
  featureParts,
  featuresOfParts,
  probabilitiesOfParts,
  type TriageModel,
} from '../classifier.js';
import { fitSoftmax, type SparseData } from './fit-softmax.js';
import {
  learnTemplateLines,
  TEMPLATE_LINE_MIN_SHARE,
  templateLineFeatures,
} from './template-lines.js';
import { formFeatures } from './form-features.js';
import { withDropoutCopies } from './dropout-copies.js';
import { encodeOrgModel, priorFeatures, type OrgModelFile } from './org-model.js';
import { categoryScores, type CategoryScores } from './scores.js';

export interface LabelledText {
  text: string;
  label: string;
}

export interface TrainSettings {
  /** L2 penalty of the (class-balanced, mean) loss. */
  l2: number;
  epochs: number;
  learningRate: number;
  /** A word or character feature must occur in this many training tickets. */
  minDf: number;
  /**
   * Cross-validation folds of the report (fewer when a category has fewer examples); 0 skips
   * the cross-validation (the report then has no scores: offline evaluations that score the
   * model on held-out tickets of their own).
   */
  folds: number;
  /**
   * Supervised term weighting: each word and character feature is scaled by its largest
   * |log-count ratio| between a category and the rest (Wang & Manning 2012), raised to this
   * power; 0 turns it off. The scale is folded into the stored weights.
   */
  nbPower: number;
  /** Whether the built-in model's log-probabilities are features. */
  prior: boolean;
  /** Whether the ticket's form (form-features.ts) is read too. */
  form: boolean;
  /**
   * The share of the tickets a line must appear in to be one of the organization's template
   * lines (template-lines.ts), read as features of their own; 0 turns them off.
   */
  templateLines: number;
  /** Multiplier of l2 per feature family (the name's prefix letter); 1 when absent. */
  familyL2: Record<string, number>;
  /** Noisy copies of each training ticket (dropout-copies.ts); 0 turns them off. */
  dropoutCopies: number;
  /** Share of a copy's features dropped. */
  dropoutRate: number;
  /**
   * Largest training set that gets the copies: beyond it the tickets themselves regularize
   * and the copies' cost (a fit per copy) would outgrow the 10-minute budget at 10,000.
   */
  dropoutMaxExamples: number;
  /** Most bytes of int8 weights (features × categories): keeps a model file under 5 MB. */
  maxWeightBytes: number;
  seed: number;
}

/**
 * The defaults, chosen by cross-validation within each NLBSE'24 repository (docs/triage.md,
 * "How the defaults were chosen"); nothing else in training is tuned to any data set.
 */
export const DEFAULT_TRAIN_SETTINGS: TrainSettings = {
  l2: 0.003,
  epochs: 100,
  learningRate: 0.1,
  minDf: 2,
  folds: 5,
  prior: true,
  form: true,
  templateLines: TEMPLATE_LINE_MIN_SHARE,
  familyL2: {},
  dropoutCopies: 2,
  dropoutRate: 0.3,
  dropoutMaxExamples: 3_000,
  nbPower: 0,
  maxWeightBytes: 3_500_000,
  seed: 1,
};

export interface TrainingReport extends CategoryScores {
  examples: number;
  folds: number;
  l2: number;
  /** Size of the model file and CPU time of the run (filled in by the training runner). */
  modelBytes?: number;
  cpuMs?: number;
}

/** Progress of a run: the phase and how far the whole run is, 0..1. */
export type ProgressListener = (phase: string, fraction: number) => void;

/** The examples, each as feature ids and values over one dictionary. */
interface Featurized {
  names: string[];
  ids: Int32Array[];
  vals: Float32Array[];
  y: Int32Array;
}

/** Prefixes of the features every model keeps whatever their frequency: cues, vectors, prior. */
const ALWAYS_KEPT = new Set(['h', 'e', 'p']);

function featurizeAll(
  examples: LabelledText[],
  classes: string[],
  builtin: TriageModel,
  s: Pick<TrainSettings, 'prior' | 'form'>,
  templateLines: ReadonlySet<string>,
  progress: (done: number) => void,
): Featurized {
  const dictionary = new Map<string, number>();
  const names: string[] = [];
  const ids: Int32Array[] = [];
  const vals: Float32Array[] = [];
  const idOf = (name: string) => {
    let id = dictionary.get(name);
    if (id === undefined) {
      id = names.length;
      dictionary.set(name, id);
      names.push(name);
    }
    return id;
  };
  examples.forEach((e, i) => {
    const parts = featureParts(e.text, builtin.features, builtin.wordVectors);
    const extra = s.prior ? priorFeatures(builtin, probabilitiesOfParts(builtin, parts)) : [];
    if (s.form) extra.push(...formFeatures(e.text));
    extra.push(...templateLineFeatures(e.text, templateLines));
    const vector = featuresOfParts(parts);
    for (const [name, value] of extra) vector.set(name, value);
    const rowIds = new Int32Array(vector.size);
    const rowVals = new Float32Array(vector.size);
    let j = 0;
    for (const [name, value] of vector) {
      rowIds[j] = idOf(name);
      rowVals[j++] = value;
    }
    ids.push(rowIds);
    vals.push(rowVals);
    if (i % 100 === 99) progress(i + 1);
  });
  const y = Int32Array.from(examples, (e) => classes.indexOf(e.label));
  return { names, ids, vals, y };
}

/**
 * The features a model trained on `rows` keeps: every cue, vector and prior feature, and the
 * words and character n-grams of at least minDf rows, the most frequent first up to the size
 * budget. Returns the old id → column map and the kept ids.
 */
function vocabulary(
  data: Featurized,
  rows: number[],
  s: TrainSettings,
  classes: number,
): { column: Int32Array; kept: number[] } {
  const df = new Int32Array(data.names.length);
  for (const r of rows) for (const id of data.ids[r]!) df[id]!++;
  const always: number[] = [];
  const counted: number[] = [];
  data.names.forEach((name, id) => {
    if (df[id] === 0) return;
    if (ALWAYS_KEPT.has(name[0]!)) always.push(id);
    else if (df[id]! >= s.minDf) counted.push(id);
  });
  const room = Math.max(0, Math.floor(s.maxWeightBytes / classes) - always.length);
  if (counted.length > room) {
    counted.sort((a, b) => df[b]! - df[a]! || a - b);
    counted.length = room;
  }
  const kept = [...always, ...counted].sort((a, b) => a - b);
  const column = new Int32Array(data.names.length).fill(-1);
  kept.forEach((id, c) => (column[id] = c));
  return { column, kept };
}

function sparseRows(
  data: Featurized,
  rows: number[],
  column: Int32Array,
  scale?: Float32Array,
): SparseData {
  const ptr = new Int32Array(rows.length + 1);
  let nnz = 0;
  rows.forEach((r, i) => {
    for (const id of data.ids[r]!) if (column[id]! >= 0) nnz++;
    ptr[i + 1] = nnz;
  });
  const idx = new Int32Array(nnz);
  const val = new Float32Array(nnz);
  let j = 0;
  for (const r of rows) {
    const ids = data.ids[r]!;
    const vals = data.vals[r]!;
    for (let t = 0; t < ids.length; t++) {
      const c = column[ids[t]!]!;
      if (c < 0) continue;
      idx[j] = c;
      val[j++] = vals[t]! * (scale ? scale[c]! : 1);
    }
  }
  return {
    ptr,
    idx,
    val,
    y: Int32Array.from(rows, (r) => data.y[r]!),
    rowWeight: new Float32Array(rows.length).fill(1),
  };
}

interface FittedModel {
  w: Float64Array;
  b: Float64Array;
  column: Int32Array;
  kept: number[];
}

function fit(
  data: Featurized,
  rows: number[],
  k: number,
  s: TrainSettings,
  onEpoch: (epoch: number) => void,
): FittedModel {
  const { column, kept } = vocabulary(data, rows, s, k);
  const scale = s.nbPower > 0 ? nbScales(data, rows, column, kept, k, s.nbPower) : undefined;
  const sparse = withDropoutCopies(
    sparseRows(data, rows, column, scale),
    s.dropoutCopies,
    s.dropoutRate,
    s.seed,
  );
  // Every category carries the same share of the loss, however many examples it has.
  const { w, b } = fitSoftmax(sparse, {
    classes: k,
    features: kept.length,
    l2: s.l2,
    ...(Object.keys(s.familyL2).length > 0
      ? {
          l2Scale: Float32Array.from(kept, (id) => s.familyL2[data.names[id]![0]!] ?? 1),
        }
      : {}),
    epochs: s.epochs,
    learningRate: s.learningRate,
    onEpoch,
  });
  // Fold the scale into the weights: the model then reads unscaled features.
  if (scale)
    for (let c = 0; c < kept.length; c++) for (let j = 0; j < k; j++) w[c * k + j]! *= scale[c]!;
  return { w, b, column, kept };
}

/**
 * Per kept column, max over categories of |log((f in k + 1) / (n_k + 2)) − log((f elsewhere
 * + 1) / (n − n_k + 2))|, to the power p; 1 for the cue, vector and prior features.
 */
function nbScales(
  data: Featurized,
  rows: number[],
  column: Int32Array,
  kept: number[],
  k: number,
  power: number,
): Float32Array {
  const count = new Float64Array(kept.length * k);
  const n = new Float64Array(k);
  for (const r of rows) {
    const y = data.y[r]!;
    n[y]!++;
    for (const id of data.ids[r]!) {
      const c = column[id]!;
      if (c >= 0) count[c * k + y]!++;
    }
  }
  const total = rows.length;
  const scale = new Float32Array(kept.length).fill(1);
  kept.forEach((id, c) => {
    if (ALWAYS_KEPT.has(data.names[id]![0]!)) return;
    let all = 0;
    for (let j = 0; j < k; j++) all += count[c * k + j]!;
    let best = 0;
    for (let j = 0; j < k; j++) {
      const inK = count[c * k + j]!;
      const r = Math.log((inK + 1) / (n[j]! + 2)) - Math.log((all - inK + 1) / (total - n[j]! + 2));
      best = Math.max(best, Math.abs(r));
    }
    scale[c] = best ** power;
  });
  return scale;
}

function predictRow(model: FittedModel, data: Featurized, r: number, k: number): number {
  const scores = Array.from(model.b);
  const ids = data.ids[r]!;
  const vals = data.vals[r]!;
  for (let t = 0; t < ids.length; t++) {
    const c = model.column[ids[t]!]!;
    if (c < 0) continue;
    for (let j = 0; j < k; j++) scores[j]! += vals[t]! * model.w[c * k + j]!;
  }
  let best = 0;
  for (let j = 1; j < k; j++) if (scores[j]! > scores[best]!) best = j;
  return best;
}

/**
 * Stratified folds: each category's examples shuffled (seeded) and dealt round-robin, so every
 * fold holds every category. `folds` is capped by the smallest category.
 */
export function stratifiedFolds(y: ArrayLike<number>, folds: number, seed: number): Int32Array {
  const random = mulberry32(seed);
  const fold = new Int32Array(y.length);
  const byClass = new Map<number, number[]>();
  Array.from(y).forEach((c, i) => {
    let list = byClass.get(c);
    if (!list) byClass.set(c, (list = []));
    list.push(i);
  });
  let next = 0;
  for (const c of [...byClass.keys()].sort((a, b) => a - b)) {
    const list = byClass
      .get(c)!
      .map((i) => [i, random()] as const)
      .sort((a, b) => a[1] - b[1]);
    // Continue the deal where the previous category stopped, so small categories spread out.
    for (const [i] of list) fold[i] = next++ % folds;
  }
  return fold;
}

/** Why a training set cannot train a model; undefined when it can. */
export function trainingSetProblem(
  counts: ReadonlyMap<string, number>,
  classes: string[],
): string | undefined {
  const present = classes.filter((c) => (counts.get(c) ?? 0) > 0);
  if (present.length < 2)
    return `the training set holds examples of ${present.length} of the organization's categories; a model needs at least 2`;
  const thin = present.filter((c) => counts.get(c)! < 2);
  if (thin.length > 0)
    return `categories ${thin.join(', ')} have fewer than 2 examples; add examples or remove the category`;
  return undefined;
}

/**
 * Trains the model of an organization: cross-validates it for the report, then trains on every
 * example. Categories without any example are left out of the model (it cannot learn them).
 */
export function trainOrgModel(
  examples: LabelledText[],
  categories: string[],
  builtin: TriageModel,
  settings: Partial<TrainSettings> = {},
  onProgress: ProgressListener = () => {},
): { model: OrgModelFile; report: TrainingReport } {
  const given = { ...DEFAULT_TRAIN_SETTINGS, ...settings };
  const counts = new Map<string, number>();
  for (const e of examples) counts.set(e.label, (counts.get(e.label) ?? 0) + 1);
  const problem = trainingSetProblem(counts, categories);
  if (problem) throw new Error(problem);
  const present = new Set(examples.map((e) => e.label));
  const classes = categories.filter((c) => present.has(c));
  const kept = examples.filter((e) => classes.includes(e.label));
  const k = classes.length;
  const s = kept.length > given.dropoutMaxExamples ? { ...given, dropoutCopies: 0 } : given;

  // Progress: featurizing ≈ 10 %, each of the folds + the final fit an equal share of the rest.
  onProgress('reading tickets', 0);
  // Unsupervised (no labels), so learned once from every ticket, the report's folds included.
  const templateLines =
    s.templateLines > 0
      ? learnTemplateLines(
          kept.map((e) => e.text),
          s.templateLines,
        )
      : [];
  const data = featurizeAll(kept, classes, builtin, s, new Set(templateLines), (done) =>
    onProgress('reading tickets', (0.1 * done) / kept.length),
  );
  const smallest = Math.min(...classes.map((_, c) => data.y.filter((y) => y === c).length));
  const folds = s.folds === 0 ? 0 : Math.max(2, Math.min(s.folds, smallest));
  const fits = folds + 1;
  const fold = folds > 0 ? stratifiedFolds(data.y, folds, s.seed) : new Int32Array(0);
  const share = 0.9 / fits;

  const all = kept.map((_, i) => i);
  const gold: number[] = [];
  const predicted: number[] = [];
  for (let f = 0; f < folds; f++) {
    const phase = `cross-validation fold ${f + 1} of ${folds}`;
    const train = all.filter((i) => fold[i] !== f);
    const test = all.filter((i) => fold[i] === f);
    const m = fit(data, train, k, s, (epoch) =>
      onProgress(phase, 0.1 + share * (f + epoch / s.epochs)),
    );
    for (const i of test) {
      gold.push(data.y[i]!);
      predicted.push(predictRow(m, data, i, k));
    }
  }
  const final = fit(data, all, k, s, (epoch) =>
    onProgress('training on every example', 0.1 + share * (folds + epoch / s.epochs)),
  );
  const report: TrainingReport = {
    examples: kept.length,
    folds,
    l2: s.l2,
    ...categoryScores(classes, gold, predicted),
  };
  const names = final.kept.map((id) => data.names[id]!);
  const model = encodeOrgModel({
    classes,
    features: builtin.features,
    prior: s.prior,
    form: s.form,
    templateLines,
    bias: final.b,
    names,
    weights: final.w,
    meta: {
      examples: kept.length,
      l2: s.l2,
      epochs: s.epochs,
      minDf: s.minDf,
      templateLines: s.templateLines,
      dropoutCopies: s.dropoutCopies,
      dropoutRate: s.dropoutRate,
    },
  });
  onProgress('done', 1);
  return { model, report };
}
