// Trains the built-in ticket classifier shipped in src/domain/triage-model.json.
//
//   npm run train:triage                      train, write the model
//   npm run train:triage -- --cv 4            also print cross-validated figures (own data only)
//   npm run train:triage -- --cv 4 --dry-run  figures only, the shipped model untouched
//   npm run train:triage -- --dump FILE       also write the generated tickets as JSON Lines
//
// Training data, all written for this project (never evaluation data): the hand-written
// tickets of training/examples.jsonl plus tickets generated from the templates and word
// lists of training/generator/ (seeded: the same options give the same model).
import { writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import prettier from 'prettier';
import type { FeatureConfig } from '../src/domain/classifier.js';
import { featurizeAll, generated, readHandWritten } from './dataset.js';
import { crossValidate, formatScores } from './evaluate.js';
import { trainModel, type TrainOptions } from './model.js';

const here = dirname(fileURLToPath(import.meta.url));

interface Options extends TrainOptions {
  examples: string;
  out: string;
  generated: number;
  seed: number;
  cv: number;
  dryRun: boolean;
  dump?: string;
}

/** The shipped model's settings, chosen by the cross-validation (docs/answer-quality.md, "Triage"). */
const DEFAULTS: Options = {
  examples: join(here, 'examples.jsonl'),
  out: join(here, '../src/domain/triage-model.json'),
  generated: 12000,
  seed: 1,
  features: { leadWords: 30, chars: { min: 3, max: 5, buckets: 1 << 16 } },
  minDf: 2,
  minSources: 3,
  l2: 0.002,
  l2ByFamily: {},
  epochs: 150,
  learningRate: 0.05,
  cv: 0,
  dryRun: false,
};

function parseArgs(argv: string[]): Options {
  const o: Options = {
    ...DEFAULTS,
    features: { ...DEFAULTS.features },
    l2ByFamily: { ...DEFAULTS.l2ByFamily },
  };
  const num = (flag: string, v: string | undefined) => {
    const n = Number(v);
    if (v === undefined || !Number.isFinite(n)) throw new Error(`${flag} needs a number`);
    return n;
  };
  for (let i = 0; i < argv.length; i++) {
    const flag = argv[i]!;
    const value = argv[i + 1];
    const features: FeatureConfig = o.features;
    switch (flag) {
      case '--dry-run':
        o.dryRun = true;
        continue;
      case '--examples':
      case '--out':
      case '--dump':
        if (!value) throw new Error(`${flag} needs a path`);
        o[flag === '--examples' ? 'examples' : flag === '--out' ? 'out' : 'dump'] = value;
        break;
      case '--generated':
        o.generated = num(flag, value);
        break;
      case '--seed':
        o.seed = num(flag, value);
        break;
      case '--cv':
        o.cv = num(flag, value);
        break;
      case '--l2':
        o.l2 = num(flag, value);
        break;
      case '--l2-family': {
        // e.g. --l2-family h=0.1,w=3,c=3
        if (!value) throw new Error(`${flag} needs family=multiplier pairs`);
        o.l2ByFamily = Object.fromEntries(
          value.split(',').map((kv) => {
            const [k, v] = kv.split('=');
            return [k!, num(flag, v)];
          }),
        );
        break;
      }
      case '--epochs':
        o.epochs = num(flag, value);
        break;
      case '--lr':
        o.learningRate = num(flag, value);
        break;
      case '--min-df':
        o.minDf = num(flag, value);
        break;
      case '--min-sources':
        o.minSources = num(flag, value);
        break;
      case '--lead':
        features.leadWords = num(flag, value);
        break;
      case '--buckets': {
        const b = num(flag, value);
        features.chars = b > 0 ? { min: 3, max: 5, buckets: b } : null;
        break;
      }
      default:
        throw new Error(`unknown option ${flag}`);
    }
    i++;
  }
  return o;
}

const o = parseArgs(process.argv.slice(2));
const hand = readHandWritten(o.examples);
const gen = generated(o.generated, o.seed);
const examples = [...hand, ...gen];
console.log(`${hand.length} hand-written examples + ${gen.length} generated (seed ${o.seed})`);
if (o.dump) {
  writeFileSync(o.dump, gen.map((e) => JSON.stringify(e)).join('\n') + '\n');
  console.log(`wrote the generated examples to ${o.dump}`);
}
const vectors = featurizeAll(examples, o.features);

if (o.cv > 1) {
  const started = Date.now();
  const { generatedToHand, grouped } = crossValidate(examples, vectors, o, o.cv);
  console.log(formatScores('generated → hand-written', generatedToHand));
  console.log(formatScores(`${o.cv}-fold grouped by domain`, grouped));
  console.log(`cross-validation took ${((Date.now() - started) / 1000).toFixed(0)} s`);
}

if (!o.dryRun) {
  const model = trainModel(examples, vectors, o, (line) => process.stderr.write(`${line}\n`));
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
  };
  // Formatted as the repository's Prettier would, so `npm run lint` stays clean.
  const prettierConfig = (await prettier.resolveConfig(o.out)) ?? {};
  writeFileSync(
    o.out,
    await prettier.format(JSON.stringify(model), { ...prettierConfig, parser: 'json' }),
  );
  console.log(`wrote ${o.out}: ${Object.keys(model.weights).length} features`);
}
