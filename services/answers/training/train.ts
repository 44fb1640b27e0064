// Trains the built-in ticket classifier shipped in src/domain/triage-model.json.
//
//   npx tsx services/answers/training/train.ts            train on examples.jsonl, write the model
//   npx tsx services/answers/training/train.ts --cv 5     also report 5-fold cross-validation
//
// Input: training/examples.jsonl, {"text","label"} per line, written for this project
// (never evaluation data). Model: multinomial logistic regression, balanced class weights,
// L2-regularised, full-batch Adam from zero weights, so the output is deterministic.
import { readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import prettier from 'prettier';
import { classify, featurize, softmax, type TriageModel } from '../src/domain/classifier.js';
import { CATEGORIES, type Category } from '../src/domain/ports.js';

const here = dirname(fileURLToPath(import.meta.url));

interface Options {
  examples: string;
  out: string;
  l2: number;
  epochs: number;
  learningRate: number;
  minDf: number;
  cv: number;
}

function parseArgs(argv: string[]): Options {
  const o: Options = {
    examples: join(here, 'examples.jsonl'),
    out: join(here, '../src/domain/triage-model.json'),
    l2: 0.002,
    epochs: 400,
    learningRate: 0.05,
    minDf: 2,
    cv: 0,
  };
  for (let i = 0; i < argv.length; i++) {
    const [flag, value] = [argv[i], argv[i + 1]];
    if (value === undefined) throw new Error(`missing value for ${flag}`);
    switch (flag) {
      case '--examples':
        o.examples = value;
        break;
      case '--out':
        o.out = value;
        break;
      case '--l2':
        o.l2 = Number(value);
        break;
      case '--epochs':
        o.epochs = Number(value);
        break;
      case '--lr':
        o.learningRate = Number(value);
        break;
      case '--min-df':
        o.minDf = Number(value);
        break;
      case '--cv':
        o.cv = Number(value);
        break;
      default:
        throw new Error(`unknown option ${flag}`);
    }
    i++;
  }
  return o;
}

interface Example {
  text: string;
  label: Category;
}

/**
 * Boilerplate that appears in tickets of every kind: environment blocks, versions,
 * greetings, sign-offs, a config snippet. Adding it to copies of examples of every
 * class teaches the model that it says nothing about the category (in real trackers
 * it comes from issue templates and habits, not from the kind of request).
 */
const NEUTRAL_BOILERPLATE = [
  'Environment:\n- OS: Ubuntu 22.04\n- Version: 3.1.4',
  'Version: 2.0.1 (Windows 11)',
  'System information\nOS: macOS 14.2\nApp version: 5.6.0\nPython 3.11',
  '- version: 1.8.0\n- platform: linux x64\n- node: 20.11.1',
  'Browser: Firefox 125, OS: Windows 10',
  'Thanks in advance!',
  'Hi team,',
  'Any help is appreciated. Thanks!',
  'Best regards,\nSam',
  '```yaml\nserver:\n  port: 8080\n  workers: 4\n```',
  '```python\nclient = Client(api_key=KEY)\nresult = client.run(job)\n```',
  'I am using the latest release from the website.',
];

/** A small deterministic PRNG (mulberry32), so training is reproducible. */
function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Each example plus one copy with one or two neutral snippets before or after its text (copy follows its original). */
function augment(examples: Example[]): Example[] {
  const rand = rng(42);
  const pick = () => NEUTRAL_BOILERPLATE[Math.floor(rand() * NEUTRAL_BOILERPLATE.length)]!;
  return examples.flatMap((e) => {
    const snippets = rand() < 0.5 ? [pick()] : [pick(), pick()];
    const before = snippets.filter((sn) => /^(Hi|Environment)/.test(sn));
    const after = snippets.filter((sn) => !before.includes(sn));
    const text = [...before, e.text, ...after].join('\n\n');
    return [e, { text, label: e.label }];
  });
}

interface Sparse {
  idx: number[];
  val: number[];
  y: number;
}

function readExamples(path: string): Example[] {
  return readFileSync(path, 'utf8')
    .split('\n')
    .filter((l) => l.trim())
    .map((l, i) => {
      const r = JSON.parse(l) as Example;
      if (typeof r.text !== 'string' || !CATEGORIES.includes(r.label))
        throw new Error(`bad example on line ${i + 1}`);
      return r;
    });
}

/**
 * Features seen in at least minDf distinct examples (hand-designed ones always).
 * `groups` are the vectors of one example and its augmented copies: they count once.
 */
function vocabulary(groups: Map<string, number>[][], minDf: number): string[] {
  const df = new Map<string, number>();
  for (const group of groups) {
    const names = new Set(group.flatMap((v) => [...v.keys()]));
    for (const name of names) df.set(name, (df.get(name) ?? 0) + 1);
  }
  return [...df]
    .filter(([name, n]) => n >= minDf || name.startsWith('h:'))
    .map(([name]) => name)
    .sort();
}

function toSparse(v: Map<string, number>, index: Map<string, number>, y: number): Sparse {
  const idx: number[] = [];
  const val: number[] = [];
  for (const [name, value] of v) {
    const i = index.get(name);
    if (i !== undefined) {
      idx.push(i);
      val.push(value);
    }
  }
  return { idx, val, y };
}

/** Multinomial logistic regression by full-batch Adam; returns weights [feature][class] and bias. */
function fit(
  data: Sparse[],
  nFeatures: number,
  o: Options,
): { w: Float64Array[]; b: Float64Array } {
  const K = CATEGORIES.length;
  const counts = new Array<number>(K).fill(0);
  for (const d of data) counts[d.y]!++;
  const classWeight = counts.map((c) => (c > 0 ? data.length / (K * c) : 0));
  const w = Array.from({ length: nFeatures }, () => new Float64Array(K));
  const b = new Float64Array(K);
  const m = Array.from({ length: nFeatures }, () => new Float64Array(K));
  const v = Array.from({ length: nFeatures }, () => new Float64Array(K));
  const mb = new Float64Array(K);
  const vb = new Float64Array(K);
  const [beta1, beta2, eps] = [0.9, 0.999, 1e-8];
  for (let epoch = 1; epoch <= o.epochs; epoch++) {
    const gw = Array.from({ length: nFeatures }, () => new Float64Array(K));
    const gb = new Float64Array(K);
    let loss = 0;
    for (const d of data) {
      const scores = Array.from(b);
      for (let j = 0; j < d.idx.length; j++) {
        const wf = w[d.idx[j]!]!;
        for (let k = 0; k < K; k++) scores[k]! += d.val[j]! * wf[k]!;
      }
      const p = softmax(scores);
      const cw = classWeight[d.y]! / data.length;
      loss -= cw * Math.log(Math.max(1e-12, p[d.y]!));
      for (let k = 0; k < K; k++) {
        const g = cw * (p[k]! - (k === d.y ? 1 : 0));
        gb[k]! += g;
        for (let j = 0; j < d.idx.length; j++) gw[d.idx[j]!]![k]! += g * d.val[j]!;
      }
    }
    const step = (
      param: Float64Array,
      grad: Float64Array,
      mm: Float64Array,
      vv: Float64Array,
      reg: boolean,
    ) => {
      for (let k = 0; k < K; k++) {
        const g = grad[k]! + (reg ? o.l2 * param[k]! : 0);
        mm[k] = beta1 * mm[k]! + (1 - beta1) * g;
        vv[k] = beta2 * vv[k]! + (1 - beta2) * g * g;
        const mh = mm[k]! / (1 - beta1 ** epoch);
        const vh = vv[k]! / (1 - beta2 ** epoch);
        param[k]! -= (o.learningRate * mh) / (Math.sqrt(vh) + eps);
      }
    };
    for (let f = 0; f < nFeatures; f++) step(w[f]!, gw[f]!, m[f]!, v[f]!, true);
    step(b, gb, mb, vb, false);
    if (epoch % 100 === 0) process.stderr.write(`  epoch ${epoch}: loss ${loss.toFixed(4)}\n`);
  }
  return { w, b };
}

function train(original: Example[], o: Options): TriageModel {
  const examples = augment(original);
  const vectors = examples.map((e) => featurize(e.text));
  const pairs = original.map((_, i) => [vectors[2 * i]!, vectors[2 * i + 1]!]);
  const features = vocabulary(pairs, o.minDf);
  const index = new Map(features.map((f, i) => [f, i]));
  const data = vectors.map((v, i) => toSparse(v, index, CATEGORIES.indexOf(examples[i]!.label)));
  const { w, b } = fit(data, features.length, o);
  const round = (x: number) => Math.round(x * 10_000) / 10_000;
  const weights: Record<string, number[]> = {};
  features.forEach((f, i) => {
    const row = Array.from(w[i]!, round);
    if (row.some((x) => x !== 0)) weights[f] = row;
  });
  return {
    version: 1,
    classes: [...CATEGORIES],
    bias: Array.from(b, round),
    weights,
    meta: {
      trainedBy: 'services/answers/training/train.ts',
      examples: original.length,
      augmentedCopies: examples.length - original.length,
      features: Object.keys(weights).length,
      l2: o.l2,
      epochs: o.epochs,
      learningRate: o.learningRate,
      minDf: o.minDf,
    },
  };
}

/** Stratified k-fold cross-validation accuracy on the examples (a sanity check, not a benchmark). */
function crossValidate(examples: Example[], o: Options): void {
  const folds: Example[][] = Array.from({ length: o.cv }, () => []);
  const perClass = new Map<Category, number>();
  for (const e of examples) {
    const n = perClass.get(e.label) ?? 0;
    perClass.set(e.label, n + 1);
    folds[n % o.cv]!.push(e);
  }
  let correct = 0;
  const confusion = new Map<string, number>();
  for (let f = 0; f < o.cv; f++) {
    const model = train(folds.filter((_, i) => i !== f).flat(), o);
    for (const e of folds[f]!) {
      const p = classify(model, e.text).category;
      if (p === e.label) correct++;
      confusion.set(`${e.label} -> ${p}`, (confusion.get(`${e.label} -> ${p}`) ?? 0) + 1);
    }
  }
  console.log(
    `${o.cv}-fold accuracy: ${(correct / examples.length).toFixed(3)} (${correct}/${examples.length})`,
  );
  for (const [k, n] of [...confusion].sort())
    if (!k.startsWith(`${k.split(' -> ')[1]} `)) console.log(`  ${k}: ${n}`);
}

const options = parseArgs(process.argv.slice(2));
const examples = readExamples(options.examples);
console.log(`${examples.length} examples from ${options.examples}`);
if (options.cv > 1) crossValidate(examples, options);
const model = train(examples, options);
// Formatted as the repository's Prettier would, so `npm run lint` stays clean.
const prettierConfig = (await prettier.resolveConfig(options.out)) ?? {};
writeFileSync(
  options.out,
  await prettier.format(JSON.stringify(model), { ...prettierConfig, parser: 'json' }),
);
console.log(`wrote ${options.out}: ${Object.keys(model.weights).length} features`);
