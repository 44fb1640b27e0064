// Trains the built-in ticket classifier shipped in src/domain/triage-model.json.
//
//   npm run train:triage                      train, write the model
//   npm run train:triage -- --cv 4            also print cross-validated figures (own data only)
//   npm run train:triage -- --cv 4 --dry-run  figures only, the shipped model untouched
//   npm run train:triage -- --dump FILE       also write the generated tickets as JSON Lines
//   npm run train:triage -- --dev FILE        also score the model on {title, body, label} issues
//                                             (training/dev/issues.jsonl: the settings' dev set)
//
// Training data, all written for this project (never evaluation data): the hand-written
// tickets of training/examples.jsonl and the hand-written GitHub-style issues of
// training/issues.jsonl, plus tickets generated from the templates and word lists of
// training/generator/ (seeded: the same options give the same model). The word vectors come
// from src/domain/triage-word-vectors.json (npm run vectors:triage).
import { writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { parseArgs } from 'node:util';
import { fileURLToPath } from 'node:url';
import prettier from 'prettier';
import { loadWordVectors } from '../src/domain/triage-model.js';
import { featurizeAll, generated, readHandWritten } from './dataset.js';
import { crossValidate, devScores, formatScores } from './evaluate.js';
import { trainModel, type TrainOptions } from './model.js';

const here = dirname(fileURLToPath(import.meta.url));

interface Options extends TrainOptions {
  /** Hand-written example files, `{text, label}` per line. */
  examples: string[];
  dev?: string;
  out: string;
  generated: number;
  seed: number;
  cv: number;
  dryRun: boolean;
  dump?: string;
}

/** The shipped model's settings, chosen by the cross-validation (docs/answer-quality.md, "Triage"). */
const DEFAULTS: Options = {
  examples: [join(here, 'examples.jsonl'), join(here, 'issues.jsonl')],
  out: join(here, '../src/domain/triage-model.json'),
  generated: 12000,
  seed: 1,
  features: {
    leadWords: 30,
    chars: { min: 3, max: 5, buckets: 1 << 16 },
    vectors: { scale: 1, words: 0 },
  },
  handWeight: 10,
  minDf: 2,
  minSources: 3,
  l2: 0.002,
  // The hand-designed cues (h:) held back 20× harder than the rest: dense and present in
  // every template, they otherwise decide alone (a question without "?" read as a bug);
  // weaker, the words, character n-grams and word vectors carry more of the decision.
  l2ByFamily: { h: 20 },
  epochs: 150,
  learningRate: 0.05,
  cv: 0,
  dryRun: false,
};

const NUMBER_OPTIONS = [
  'generated',
  'seed',
  'cv',
  'l2',
  'epochs',
  'lr',
  'min-df',
  'min-sources',
  'lead',
  'buckets',
  'hand-weight',
  'vectors',
] as const;

function parseOptions(argv: string[]): Options {
  const { values } = parseArgs({
    args: argv,
    strict: true,
    options: {
      // comma-separated
      examples: { type: 'string' },
      dev: { type: 'string' },
      out: { type: 'string' },
      dump: { type: 'string' },
      'dry-run': { type: 'boolean' },
      // e.g. --l2-family h=0.1,w=3
      'l2-family': { type: 'string' },
      ...Object.fromEntries(NUMBER_OPTIONS.map((n) => [n, { type: 'string' as const }])),
    },
  });
  const num = (name: (typeof NUMBER_OPTIONS)[number], fallback: number): number => {
    const v = (values as Record<string, string | boolean | undefined>)[name] as string | undefined;
    if (v === undefined) return fallback;
    const n = Number(v);
    if (v.trim() === '' || !Number.isFinite(n)) throw new Error(`--${name} needs a number`);
    return n;
  };
  const buckets = num('buckets', DEFAULTS.features.chars?.buckets ?? 0);
  const vectorScale = num('vectors', DEFAULTS.features.vectors?.scale ?? 0);
  const examples = values.examples as string | undefined;
  const family = (values['l2-family'] as string | undefined)?.split(',').map((kv) => {
    const [k, v] = kv.split('=');
    const n = Number(v);
    if (!k || v === undefined || !Number.isFinite(n))
      throw new Error('--l2-family needs family=multiplier pairs');
    return [k, n] as const;
  });
  return {
    ...DEFAULTS,
    examples: examples ? examples.split(',') : DEFAULTS.examples,
    dev: values.dev as string | undefined,
    handWeight: num('hand-weight', DEFAULTS.handWeight ?? 1),
    out: (values.out as string | undefined) ?? DEFAULTS.out,
    dump: values.dump as string | undefined,
    dryRun: values['dry-run'] === true,
    generated: num('generated', DEFAULTS.generated),
    seed: num('seed', DEFAULTS.seed),
    cv: num('cv', DEFAULTS.cv),
    l2: num('l2', DEFAULTS.l2),
    l2ByFamily: family ? Object.fromEntries(family) : DEFAULTS.l2ByFamily,
    epochs: num('epochs', DEFAULTS.epochs),
    learningRate: num('lr', DEFAULTS.learningRate),
    minDf: num('min-df', DEFAULTS.minDf),
    minSources: num('min-sources', DEFAULTS.minSources),
    features: {
      leadWords: num('lead', DEFAULTS.features.leadWords),
      chars: buckets > 0 ? { min: 3, max: 5, buckets } : null,
      vectors: vectorScale > 0 ? { scale: vectorScale, words: 0 } : null,
    },
  };
}

const o = parseOptions(process.argv.slice(2));
if (o.features.vectors) {
  o.wordVectors = loadWordVectors();
  o.features.vectors.words = o.wordVectors.index.size;
}
const hand = o.examples.flatMap((file) => readHandWritten(file));
const gen = generated(o.generated, o.seed);
const examples = [...hand, ...gen];
console.log(`${hand.length} hand-written examples + ${gen.length} generated (seed ${o.seed})`);
if (o.dump) {
  writeFileSync(o.dump, gen.map((e) => JSON.stringify(e)).join('\n') + '\n');
  console.log(`wrote the generated examples to ${o.dump}`);
}
const vectors = featurizeAll(examples, o.features, o.wordVectors);

if (o.cv > 1) {
  const started = Date.now();
  const { generatedToHand, grouped } = crossValidate(examples, vectors, o, o.cv);
  console.log(formatScores('generated → hand-written', generatedToHand));
  console.log(formatScores(`${o.cv}-fold grouped by domain`, grouped));
  console.log(`cross-validation took ${((Date.now() - started) / 1000).toFixed(0)} s`);
}

if (!o.dryRun || o.dev) {
  const { wordVectors: _, ...model } = trainModel(examples, vectors, o, (line) =>
    process.stderr.write(`${line}\n`),
  );
  if (o.dev) {
    for (const [subset, s] of devScores({ ...model, wordVectors: o.wordVectors }, o.dev))
      console.log(formatScores(`dev ${subset}`, s));
  }
  model.meta = {
    trainedBy: 'npm run train:triage (services/answers/training/train.ts)',
    handWritten: hand.length,
    generated: gen.length,
    seed: o.seed,
    features: Object.keys(model.weights).length,
    minDf: o.minDf,
    minSources: o.minSources,
    l2: o.l2,
    l2ByFamily: o.l2ByFamily,
    epochs: o.epochs,
    learningRate: o.learningRate,
    handWeight: o.handWeight,
  };
  if (!o.dryRun) {
    // Formatted as the repository's Prettier would, so `npm run lint` stays clean.
    const prettierConfig = (await prettier.resolveConfig(o.out)) ?? {};
    writeFileSync(
      o.out,
      await prettier.format(JSON.stringify(model), { ...prettierConfig, parser: 'json' }),
    );
    console.log(`wrote ${o.out}: ${Object.keys(model.weights).length} features`);
  }
}
