// An organization's own triage model: a linear model over the same features as the built-in
// classifier (classifier.ts), plus the built-in model's log-probabilities as a prior, that
// chooses among the organization's own category names. Trained by train-org-model.ts, stored
// as the JSON file below (int8 weights, so 10,000 tickets' vocabulary stays well under 5 MB).
import {
  compileWeights,
  featureParts,
  probabilitiesOfParts,
  scoreParts,
  softmax,
  type FeatureConfig,
  type LinearWeights,
  type TriageModel,
} from '../classifier.js';
import { isCategoryName } from './categories.js';
import { templateLineFeatures } from './template-lines.js';
import { formFeatures } from './form-features.js';

/** The model file (what the store keeps per version). */
export interface OrgModelFile {
  kind: 'org-triage';
  version: 1;
  classes: string[];
  /** Always the built-in model's configuration: one featurization serves both. */
  features: FeatureConfig;
  /** Whether the built-in model's log-probabilities are features (`p:<category>`). */
  prior: boolean;
  /** Whether the ticket's form is read too (form-features.ts, `m:…`); absent in older files. */
  form?: boolean;
  /** The organization's template lines (template-lines.ts); absent in older files. */
  templateLines?: string[];
  bias: number[];
  /** Feature names, newline-separated, in the order of the weight rows. */
  names: string;
  /** Per feature, the float32 scale of its int8 row (base64, little-endian). */
  scales: string;
  /** features × classes int8 weights, row-major (base64). */
  weights: string;
  meta?: Record<string, unknown>;
}

/** A loaded model, ready to classify. */
export interface OrgModel {
  classes: string[];
  prior: boolean;
  form: boolean;
  templateLines: ReadonlySet<string>;
  weights: LinearWeights;
  /** The built-in model the features and the prior come from. */
  builtin: TriageModel;
}

/** Smallest probability a prior feature takes the log of. */
const PRIOR_FLOOR = 1e-4;

/** The prior features of a text: the built-in model's log-probabilities, named `p:<category>`. */
export function priorFeatures(builtin: TriageModel, probabilities: number[]): [string, number][] {
  return builtin.classes.map((c, k) => [
    `p:${c}`,
    Math.log(Math.max(PRIOR_FLOOR, probabilities[k] ?? 0)),
  ]);
}

/** Class probabilities (in `model.classes` order) of a text. */
export function orgModelProbabilities(model: OrgModel, text: string): number[] {
  const { builtin } = model;
  const parts = featureParts(text, builtin.features, builtin.wordVectors);
  const extra = model.prior ? priorFeatures(builtin, probabilitiesOfParts(builtin, parts)) : [];
  if (model.form) extra.push(...formFeatures(text));
  extra.push(...templateLineFeatures(text, model.templateLines));
  return softmax(scoreParts(model.weights, parts, extra));
}

export interface OrgClassification {
  category: string;
  probabilities: Record<string, number>;
}

export function classifyWithOrgModel(model: OrgModel, text: string): OrgClassification {
  const probs = orgModelProbabilities(model, text);
  let best = 0;
  probs.forEach((p, k) => {
    if (p > probs[best]!) best = k;
  });
  return {
    category: model.classes[best]!,
    probabilities: Object.fromEntries(model.classes.map((c, k) => [c, probs[k]!])),
  };
}

/** Encodes trained float weights (features × classes, row-major) into the model file. */
export function encodeOrgModel(input: {
  classes: string[];
  features: FeatureConfig;
  prior: boolean;
  form?: boolean;
  templateLines?: string[];
  bias: ArrayLike<number>;
  names: string[];
  weights: Float64Array;
  meta?: Record<string, unknown>;
}): OrgModelFile {
  const k = input.classes.length;
  const kept: number[] = [];
  input.names.forEach((_, i) => {
    for (let j = 0; j < k; j++)
      if (input.weights[i * k + j] !== 0) {
        kept.push(i);
        return;
      }
  });
  const scales = Buffer.alloc(kept.length * 4);
  const q = Buffer.alloc(kept.length * k);
  kept.forEach((i, r) => {
    let max = 0;
    for (let j = 0; j < k; j++) max = Math.max(max, Math.abs(input.weights[i * k + j]!));
    const scale = max / 127;
    scales.writeFloatLE(scale, r * 4);
    for (let j = 0; j < k; j++)
      q.writeInt8(Math.round(input.weights[i * k + j]! / scale), r * k + j);
  });
  return {
    kind: 'org-triage',
    version: 1,
    classes: input.classes,
    features: input.features,
    prior: input.prior,
    ...(input.form ? { form: true } : {}),
    ...(input.templateLines?.length ? { templateLines: input.templateLines } : {}),
    bias: Array.from(input.bias, (b) => Math.round(b * 1e6) / 1e6),
    names: kept.map((i) => input.names[i]!).join('\n'),
    scales: scales.toString('base64'),
    weights: q.toString('base64'),
    ...(input.meta ? { meta: input.meta } : {}),
  };
}

const fail = (why: string): never => {
  throw new Error(`organization triage model: ${why}`);
};

/**
 * Checks and loads a model file against the built-in model it was trained with; a bad file
 * fails here, when it is loaded, never mid-triage.
 */
export function loadOrgModel(raw: unknown, builtin: TriageModel): OrgModel {
  const f = raw as OrgModelFile;
  if (f?.kind !== 'org-triage' || f.version !== 1) fail('not an organization model file');
  const k = Array.isArray(f.classes) ? f.classes.length : 0;
  if (k < 2 || !f.classes.every(isCategoryName) || new Set(f.classes).size !== k)
    fail('bad classes');
  if (JSON.stringify(f.features) !== JSON.stringify(builtin.features))
    fail('trained with other features than the built-in model reads');
  if (!Array.isArray(f.bias) || f.bias.length !== k || !f.bias.every(Number.isFinite))
    fail('bad bias');
  const templateLines = f.templateLines ?? [];
  if (!Array.isArray(templateLines) || !templateLines.every((l) => typeof l === 'string'))
    fail('bad template lines');
  const names = typeof f.names === 'string' && f.names !== '' ? f.names.split('\n') : [];
  const scales = Buffer.from(String(f.scales), 'base64');
  const q = Buffer.from(String(f.weights), 'base64');
  if (scales.length !== names.length * 4 || q.length !== names.length * k)
    fail('names, scales and weights do not match');
  const rows: [string, Float64Array][] = names.map((name, r) => {
    const scale = scales.readFloatLE(r * 4);
    const w = new Float64Array(k);
    for (let j = 0; j < k; j++) w[j] = q.readInt8(r * k + j) * scale;
    return [name, w];
  });
  const buckets = builtin.features.chars?.buckets ?? 0;
  for (const [name] of rows) {
    if (!name.startsWith('c:')) continue;
    const b = Number(name.slice(2));
    if (!Number.isInteger(b) || b < 0 || b >= buckets) fail(`${name} is outside the buckets`);
  }
  const dims = builtin.features.vectors && builtin.wordVectors ? builtin.wordVectors.dims : 0;
  return {
    classes: [...f.classes],
    prior: f.prior === true,
    form: f.form === true,
    templateLines: new Set(templateLines),
    weights: compileWeights(f.bias, rows, buckets, dims),
    builtin,
  };
}
