import { CATEGORIES, type Category } from './ports.js';
import {
  handFeatures,
  MAX_CLASSIFIED_CHARS,
  stripCode,
  subjectOf,
  tokens,
} from './triage-features.js';

/**
 * The built-in ticket classifier: a multinomial logistic regression over word
 * uni/bigrams of the text, of its subject line and of the body's opening words,
 * hashed character n-grams of its words, and hand-designed cues (triage-features.ts).
 * The weights ship in triage-model.json, trained by training/train.ts
 * (`npm run train:triage`) on tickets written for this project.
 */

/** How a model reads a text; stored in the model file so training and use agree. */
export interface FeatureConfig {
  /** The first this-many words of the body form their own channel (`l:`); 0 turns it off. */
  leadWords: number;
  /** Character n-grams of the prose's words hashed into `c:<bucket>`; null turns them off. */
  chars: { min: number; max: number; buckets: number } | null;
}

export interface TriageModel {
  version: 2;
  classes: Category[];
  features: FeatureConfig;
  bias: number[];
  /** Feature name → one weight per class (features without an entry weigh 0). */
  weights: Record<string, number[]>;
  meta?: Record<string, unknown>;
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

/** FNV-1a, 32 bits: a fast, stable string hash for the character n-gram buckets. */
export function fnv1a(s: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < s.length; i++) {
    h ^= s.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0;
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

/** A text's named features, and its character n-gram buckets (named `c:<bucket>` in a model file). */
interface FeatureParts {
  named: FeatureVector;
  buckets: Set<number>;
}

function featureParts(raw: string, config: FeatureConfig): FeatureParts {
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
  return { named, buckets: config.chars ? charBuckets(words, config.chars) : new Set() };
}

const bucketNorm = (buckets: Set<number>) => (buckets.size > 0 ? 1 / Math.sqrt(buckets.size) : 0);

/**
 * The feature vector of a text: word uni/bigrams of its prose (`w:`), of its
 * subject line separately (`t:`: a subject states the intent in a few words,
 * which a long body would otherwise drown), of the body's first words (`l:`:
 * people say what they want before they paste logs and templates), character
 * n-grams (`c:`, L2-normalised like each word family), and the hand-designed cues
 * (`h:`). Length itself is deliberately not a feature.
 */
export function featurize(raw: string, config: FeatureConfig): FeatureVector {
  const { named, buckets } = featureParts(raw, config);
  const norm = bucketNorm(buckets);
  for (const b of buckets) named.set(`c:${b}`, norm);
  return named;
}

/** A model's weights in lookup form: a Map for named features, a flat array for buckets. */
interface Compiled {
  named: Map<string, number[]>;
  /** bucket × class, row-major. */
  hashed: Float64Array;
}

const compiledModels = new WeakMap<TriageModel, Compiled>();

function compiled(model: TriageModel): Compiled {
  let c = compiledModels.get(model);
  if (!c) {
    const k = model.classes.length;
    const hashed = new Float64Array((model.features.chars?.buckets ?? 0) * k);
    const named = new Map<string, number[]>();
    for (const [name, w] of Object.entries(model.weights)) {
      if (name.startsWith('c:')) hashed.set(w, Number(name.slice(2)) * k);
      else named.set(name, w);
    }
    c = { named, hashed };
    compiledModels.set(model, c);
  }
  return c;
}

/** Class probabilities of a text under a model (softmax of the linear scores). */
export function predictProbabilities(model: TriageModel, text: string): number[] {
  const { named, buckets } = featureParts(text, model.features);
  const weights = compiled(model);
  const k = model.bias.length;
  const scores = [...model.bias];
  for (const [name, value] of named) {
    const w = weights.named.get(name);
    if (!w) continue;
    for (let j = 0; j < k; j++) scores[j]! += value * w[j]!;
  }
  const norm = bucketNorm(buckets);
  for (const b of buckets)
    for (let j = 0; j < k; j++) scores[j]! += norm * weights.hashed[b * k + j]!;
  return softmax(scores);
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
  for (const [name, w] of Object.entries(m.weights)) {
    if (!Array.isArray(w) || w.length !== k || !w.every(Number.isFinite))
      throw new Error(`triage model: bad weights for ${name}`);
    if (name.startsWith('c:')) {
      const bucket = Number(name.slice(2));
      if (!c || !Number.isInteger(bucket) || bucket < 0 || bucket >= c.buckets)
        throw new Error(`triage model: ${name} is outside the character n-gram buckets`);
    }
  }
  return m;
}
