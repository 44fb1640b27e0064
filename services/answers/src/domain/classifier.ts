import { fnv1a } from '@support-agent/shared';
import { CATEGORIES, type Category } from './ports.js';
import {
  handFeatures,
  MAX_CLASSIFIED_CHARS,
  stripCode,
  subjectOf,
  tokens,
} from './triage-features.js';
import { meanVector, type WordVectors } from './word-vectors.js';

/**
 * The built-in ticket classifier: a multinomial logistic regression over word
 * uni/bigrams of the text, of its subject line and of the body's opening words,
 * hashed character n-grams of its words, hand-designed cues (triage-features.ts) and the
 * mean word vectors of its subject and body (word-vectors.ts).
 * The weights ship in triage-model.json, trained by training/train.ts
 * (`npm run train:triage`) on tickets written for this project.
 */

/** How a model reads a text; stored in the model file so training and use agree. */
export interface FeatureConfig {
  /** The first this-many words of the body form their own channel (`l:`); 0 turns it off. */
  leadWords: number;
  /** Character n-grams of the prose's words hashed into `c:<bucket>`; null turns them off. */
  chars: { min: number; max: number; buckets: number } | null;
  /**
   * Mean word vectors of the subject (`e:t<d>`) and the body (`e:b<d>`), times `scale`;
   * null or absent turns them off. `words` is the size of the table the model was trained
   * with, checked when the model is loaded.
   */
  vectors?: { scale: number; words: number } | null;
}

export interface TriageModel {
  version: 2;
  classes: Category[];
  features: FeatureConfig;
  bias: number[];
  /** Feature name → one weight per class (features without an entry weigh 0). */
  weights: Record<string, number[]>;
  meta?: Record<string, unknown>;
  /** The word-vector table, attached at load time (never part of the model file). */
  wordVectors?: WordVectors;
}

export type FeatureVector = Map<string, number>;

/** Binary uni/bigrams of `toks` with prefix `p`, L2-normalised so long and short texts weigh alike. */
function addGrams(v: FeatureVector, p: string, toks: string[]): void {
  const grams = new Set<string>();
  for (let i = 0; i < toks.length; i++) {
    grams.add(`${p}${toks[i]}`);
    if (i + 1 < toks.length) grams.add(`${p}${toks[i]} ${toks[i + 1]}`);
  }
  const norm = grams.size > 0 ? 1 / Math.sqrt(grams.size) : 0;
  for (const g of grams) v.set(g, norm);
}

/**
 * The hashed character n-grams of each distinct word (padded `<word>`): "crashes",
 * "crashed" and "crashing" share most of theirs, so a form never seen in training
 * still reads like its relatives.
 */
function charBuckets(toks: string[], c: NonNullable<FeatureConfig['chars']>): Set<number> {
  const buckets = new Set<number>();
  for (const t of new Set(toks)) {
    if (t === '#') continue;
    const w = `<${t}>`;
    for (let n = c.min; n <= c.max; n++)
      for (let i = 0; i + n <= w.length; i++) buckets.add(fnv1a(w.slice(i, i + n)) % c.buckets);
  }
  return buckets;
}

/**
 * A text's named features, its character n-gram buckets (named `c:<bucket>` in a model
 * file) and its dense word-vector features (`e:t<d>` then `e:b<d>`).
 */
export interface FeatureParts {
  named: FeatureVector;
  buckets: Set<number>;
  dense: Float64Array | undefined;
}

/** Dense feature names, in the order of FeatureParts.dense. */
const denseNames = (dims: number) =>
  ['t', 'b'].flatMap((p) => Array.from({ length: dims }, (_, d) => `e:${p}${d}`));

/** Subject and body mean vectors side by side (zeros where no word is known), times scale. */
function denseFeatures(
  vectors: WordVectors,
  scale: number,
  subjectWords: string[],
  words: string[],
): Float64Array {
  // Without a subject line, the opening words stand in for it.
  const subject = meanVector(vectors, subjectWords.length ? subjectWords : words.slice(0, 12));
  const bodyWords = words.slice(subjectWords.length);
  const body = meanVector(vectors, bodyWords.length ? bodyWords : words);
  const out = new Float64Array(2 * vectors.dims);
  subject?.forEach((x, d) => (out[d] = x * scale));
  body?.forEach((x, d) => (out[vectors.dims + d] = x * scale));
  return out;
}

export function featureParts(
  raw: string,
  config: FeatureConfig,
  vectors?: WordVectors,
): FeatureParts {
  const text = raw.slice(0, MAX_CLASSIFIED_CHARS);
  const named: FeatureVector = new Map();
  const words = tokens(stripCode(text));
  addGrams(named, 'w:', words);
  const subject = subjectOf(text);
  const subjectWords = subject ? tokens(subject) : [];
  if (subject) addGrams(named, 't:', subjectWords);
  if (config.leadWords > 0) {
    const body = words.slice(subjectWords.length, subjectWords.length + config.leadWords);
    addGrams(named, 'l:', body);
  }
  for (const [name, value] of Object.entries(handFeatures(text)))
    if (value !== 0) named.set(name, value);
  let dense: Float64Array | undefined;
  if (config.vectors) {
    if (!vectors) throw new Error('triage model: it reads word vectors, but none are loaded');
    dense = denseFeatures(vectors, config.vectors.scale, subjectWords, words);
  }
  return {
    named,
    buckets: config.chars ? charBuckets(words, config.chars) : new Set(),
    dense,
  };
}

const bucketNorm = (buckets: Set<number>) => (buckets.size > 0 ? 1 / Math.sqrt(buckets.size) : 0);

/**
 * The feature vector of a text: word uni/bigrams of its prose (`w:`), of its
 * subject line separately (`t:`: a subject states the intent in a few words,
 * which a long body would otherwise drown), of the body's first words (`l:`:
 * people say what they want before they paste logs and templates), character
 * n-grams (`c:`, L2-normalised like each word family), the hand-designed cues (`h:`),
 * and the mean word vectors of subject and body (`e:`, when the config has them; then
 * `vectors` is required). Length itself is deliberately not a feature.
 */
export function featurize(
  raw: string,
  config: FeatureConfig,
  vectors?: WordVectors,
): FeatureVector {
  return featuresOfParts(featureParts(raw, config, vectors));
}

/** The named form of feature parts (buckets as `c:<bucket>`, dense values as `e:…`); takes over `parts.named`. */
export function featuresOfParts({ named, buckets, dense }: FeatureParts): FeatureVector {
  const norm = bucketNorm(buckets);
  for (const b of buckets) named.set(`c:${b}`, norm);
  if (dense) denseNames(dense.length / 2).forEach((name, i) => named.set(name, dense[i]!));
  return named;
}

/**
 * A linear model's weights in lookup form: a Map for named features, flat arrays for the
 * character n-gram buckets and the dense features. The built-in model and every
 * organization's model (org-triage/org-model.ts) score through it.
 */
export interface LinearWeights {
  /** Classes. */
  k: number;
  bias: ArrayLike<number>;
  named: Map<string, ArrayLike<number>>;
  /** bucket × class, row-major. */
  hashed: Float64Array;
  /** dense feature × class, row-major, in the order of denseNames. */
  dense: Float64Array;
}

const compiledModels = new WeakMap<TriageModel, LinearWeights>();

function compiled(model: TriageModel): LinearWeights {
  let c = compiledModels.get(model);
  if (!c) {
    c = compileWeights(
      model.bias,
      Object.entries(model.weights),
      model.features.chars?.buckets ?? 0,
      model.features.vectors && model.wordVectors ? model.wordVectors.dims : 0,
    );
    compiledModels.set(model, c);
  }
  return c;
}

/** Lookup form of named weight rows (`c:<bucket>` and `e:<name>` rows go to the flat arrays). */
export function compileWeights(
  bias: ArrayLike<number>,
  rows: Iterable<[string, ArrayLike<number>]>,
  buckets: number,
  vectorDims: number,
): LinearWeights {
  const k = bias.length;
  const hashed = new Float64Array(buckets * k);
  const names = vectorDims > 0 ? denseNames(vectorDims) : [];
  const denseIndex = new Map(names.map((name, i) => [name, i]));
  const dense = new Float64Array(names.length * k);
  const named = new Map<string, ArrayLike<number>>();
  for (const [name, w] of rows) {
    if (name.startsWith('c:')) hashed.set(w, Number(name.slice(2)) * k);
    else if (name.startsWith('e:')) {
      const i = denseIndex.get(name);
      if (i !== undefined) dense.set(w, i * k);
    } else named.set(name, w);
  }
  return { k, bias, named, hashed, dense };
}

/** The linear scores of a text's features (before the softmax); `extra` adds named features. */
export function scoreParts(
  weights: LinearWeights,
  parts: FeatureParts,
  extra?: Iterable<[string, number]>,
): number[] {
  const { k } = weights;
  const scores = Array.from(weights.bias);
  const add = (name: string, value: number) => {
    const w = weights.named.get(name);
    if (!w) return;
    for (let j = 0; j < k; j++) scores[j]! += value * w[j]!;
  };
  for (const [name, value] of parts.named) add(name, value);
  if (extra) for (const [name, value] of extra) add(name, value);
  const norm = bucketNorm(parts.buckets);
  if (weights.hashed.length > 0)
    for (const b of parts.buckets)
      for (let j = 0; j < k; j++) scores[j]! += norm * weights.hashed[b * k + j]!;
  const { dense } = parts;
  if (dense && weights.dense.length > 0)
    for (let i = 0; i < dense.length; i++)
      for (let j = 0; j < k; j++) scores[j]! += dense[i]! * weights.dense[i * k + j]!;
  return scores;
}

/** Class probabilities of a text under a model (softmax of the linear scores). */
export function predictProbabilities(model: TriageModel, text: string): number[] {
  return softmax(
    scoreParts(compiled(model), featureParts(text, model.features, model.wordVectors)),
  );
}

/** The built-in model's probabilities from features already worked out with its configuration. */
export function probabilitiesOfParts(model: TriageModel, parts: FeatureParts): number[] {
  return softmax(scoreParts(compiled(model), parts));
}

export function softmax(scores: number[]): number[] {
  const max = Math.max(...scores);
  const exps = scores.map((s) => Math.exp(s - max));
  const sum = exps.reduce((a, b) => a + b, 0);
  return exps.map((e) => e / sum);
}

export interface Classification {
  category: Category;
  probabilities: Record<Category, number>;
}

/** The three kinds of question; the classifier decides "question or not" on their summed probability. */
const QUESTION_KINDS: readonly Category[] = ['how_to', 'general_question', 'documentation'];

/**
 * Classifies a ticket's text into one of the five categories, top-down: first
 * bug vs feature_request vs question (the three question kinds' probabilities
 * summed: they are one branch of the taxonomy), then the most probable kind
 * within the winning branch.
 */
export function classify(model: TriageModel, text: string): Classification {
  const probs = predictProbabilities(model, text);
  const probabilities = Object.fromEntries(CATEGORIES.map((c) => [c, 0])) as Record<
    Category,
    number
  >;
  model.classes.forEach((c, k) => (probabilities[c] = probs[k] ?? 0));
  const question = QUESTION_KINDS.reduce((sum, c) => sum + probabilities[c], 0);
  let category: Category;
  if (probabilities.bug >= probabilities.feature_request && probabilities.bug >= question)
    category = 'bug';
  else if (probabilities.feature_request >= question) category = 'feature_request';
  else category = [...QUESTION_KINDS].sort((a, b) => probabilities[b] - probabilities[a])[0]!;
  return { category, probabilities };
}

/** Checks a parsed model file's shape, so a bad file fails at start-up rather than mid-triage. */
export function checkModel(model: unknown): TriageModel {
  const m = model as TriageModel;
  const k = m?.classes?.length;
  if (
    m?.version !== 2 ||
    !k ||
    !m.classes.every((c) => (CATEGORIES as readonly string[]).includes(c))
  ) {
    throw new Error('triage model: bad version or classes');
  }
  if (!Array.isArray(m.bias) || m.bias.length !== k || typeof m.weights !== 'object') {
    throw new Error('triage model: bad bias or weights');
  }
  const f = m.features;
  const c = f?.chars;
  if (
    !f ||
    !Number.isInteger(f.leadWords) ||
    f.leadWords < 0 ||
    (c !== null &&
      !(c && c.min >= 1 && c.max >= c.min && Number.isInteger(c.buckets) && c.buckets > 0))
  ) {
    throw new Error('triage model: bad feature configuration');
  }
  const v = f.vectors;
  if (
    v !== undefined &&
    v !== null &&
    !(Number.isFinite(v.scale) && v.scale > 0 && Number.isInteger(v.words) && v.words > 0)
  )
    throw new Error('triage model: bad word-vector configuration');
  for (const [name, w] of Object.entries(m.weights)) {
    if (!Array.isArray(w) || w.length !== k || !w.every(Number.isFinite))
      throw new Error(`triage model: bad weights for ${name}`);
    if (name.startsWith('c:')) {
      const bucket = Number(name.slice(2));
      if (!c || !Number.isInteger(bucket) || bucket < 0 || bucket >= c.buckets)
        throw new Error(`triage model: ${name} is outside the character n-gram buckets`);
    }
    if (name.startsWith('e:') && !v)
      throw new Error(`triage model: ${name} is a word-vector feature, but the model reads none`);
  }
  return m;
}
