// Search latency and throughput of the embedded index (the `npm start` backend) at
// 1k, 10k and 100k entries in one organization, through the domain use case (query
// analysis + hashed query embedding + candidates + calibrated rescoring).
// Synthetic text is generated here (Zipf-distributed pseudo-words), never taken
// from evaluation data.
//
//   npx tsx services/knowledge/bench/search-bench.ts [sizes=1000,10000,100000] [queries=1000]
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createLogger } from '@support-agent/shared';
import { EmbeddedIndex } from '../src/data-access/embedded-index.js';
import { HashedEmbeddings } from '../src/data-access/hashed-embeddings.js';
import { collectionName } from '../src/domain/fingerprint.js';
import { searchEntries, type KnowledgeDeps } from '../src/domain/search.js';
import { upsertEntries } from '../src/domain/upsert.js';
import type { EntryInput } from '../src/domain/validation.js';

const sizes = (process.argv[2] ?? '1000,10000,100000').split(',').map(Number);
const queryCount = Number(process.argv[3] ?? 1000);

/** Small deterministic PRNG (mulberry32) so every run sees the same data. */
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

const random = rng(42);
const SYLLABLES = [
  'ka',
  'lo',
  'mi',
  'ne',
  'ru',
  'sta',
  'ver',
  'po',
  'lin',
  'dex',
  'tor',
  'qua',
  'zen',
  'fi',
  'gro',
  'bel',
  'sun',
  'tra',
];
const FUNCTION_WORDS = [
  'the',
  'a',
  'to',
  'of',
  'in',
  'is',
  'how',
  'do',
  'i',
  'my',
  'can',
  'with',
  'for',
  'and',
  'it',
  'on',
];
const VOCABULARY = Array.from({ length: 20_000 }, () => {
  const n = 2 + Math.floor(random() * 3);
  return Array.from({ length: n }, () => SYLLABLES[Math.floor(random() * SYLLABLES.length)]).join(
    '',
  );
});
// Zipf(1.1) over the vocabulary: a few very common words, a long tail of rare ones.
const CUMULATIVE = (() => {
  const weights = VOCABULARY.map((_, i) => 1 / Math.pow(i + 1, 1.1));
  const total = weights.reduce((a, b) => a + b, 0);
  let acc = 0;
  return weights.map((w) => (acc += w / total));
})();

function word(): string {
  if (random() < 0.3) return FUNCTION_WORDS[Math.floor(random() * FUNCTION_WORDS.length)]!;
  const r = random();
  let lo = 0;
  let hi = CUMULATIVE.length - 1;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (CUMULATIVE[mid]! < r) lo = mid + 1;
    else hi = mid;
  }
  return VOCABULARY[lo]!;
}

const sentence = (min: number, max: number) =>
  Array.from({ length: min + Math.floor(random() * (max - min + 1)) }, word).join(' ');

function entry(i: number): Required<EntryInput> {
  return { id: `e${i}`, question: `${sentence(6, 12)}?`, answer: `${sentence(30, 80)}.`, tags: [] };
}

/** A query paraphrasing a random entry's question: some of its words, some noise. */
function queryFor(question: string): string {
  const words = question.replace('?', '').split(' ');
  const kept = words.filter(() => random() < 0.6);
  return [...kept, word(), word()].join(' ');
}

const percentile = (sorted: number[], p: number) =>
  sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))]!;

const logger = createLogger('knowledge-bench', 'warn');
const reloadSeconds: string[] = [];
console.log(
  `embedded index search benchmark (node ${process.version}, ${queryCount} queries per size, limit 5)\n`,
);
console.log('entries   import/s   index MB*   search p50   search p99   searches/s   avg results');
for (const size of sizes) {
  const dir = mkdtempSync(join(tmpdir(), 'kb-bench-'));
  try {
    const embeddings = new HashedEmbeddings();
    const index = new EmbeddedIndex({
      dir,
      collection: collectionName('bench', embeddings.fingerprint),
      dimensions: embeddings.dimensions,
      logger,
    });
    await index.init();
    const deps: KnowledgeDeps = { index, embeddings, logger, now: Date.now };
    const entries = Array.from({ length: size }, (_, i) => entry(i));

    const importStart = performance.now();
    for (let i = 0; i < entries.length; i += 1000) {
      const res = await upsertEntries(deps, 'bench', entries.slice(i, i + 1000));
      if (res.failed.length > 0) throw new Error(`import failed: ${res.failed[0]!.message}`);
    }
    const importSeconds = (performance.now() - importStart) / 1000;

    const queries = Array.from({ length: queryCount }, () =>
      queryFor(entries[Math.floor(random() * entries.length)]!.question),
    );
    for (const q of queries.slice(0, 50))
      await searchEntries(deps, { orgId: 'bench', query: q, limit: 5 });

    const latencies: number[] = [];
    let results = 0;
    const started = performance.now();
    for (const q of queries) {
      const t = performance.now();
      results += (await searchEntries(deps, { orgId: 'bench', query: q, limit: 5 })).length;
      latencies.push(performance.now() - t);
    }
    const seconds = (performance.now() - started) / 1000;
    latencies.sort((a, b) => a - b);
    const denseMb = (size * embeddings.dimensions * 4) / 1e6;
    console.log(
      [
        String(size).padEnd(8),
        (size / importSeconds).toFixed(0).padStart(9),
        denseMb.toFixed(0).padStart(10),
        `${percentile(latencies, 0.5).toFixed(2)} ms`.padStart(12),
        `${percentile(latencies, 0.99).toFixed(2)} ms`.padStart(12),
        (queries.length / seconds).toFixed(0).padStart(12),
        (results / queries.length).toFixed(1).padStart(13),
      ].join(' '),
    );
    await index.close();

    // Start-up cost: replaying the journal (text + vectors) of this many entries.
    const reloadStart = performance.now();
    const reopened = new EmbeddedIndex({
      dir,
      collection: index.collection,
      dimensions: embeddings.dimensions,
      logger,
    });
    await reopened.init();
    reloadSeconds.push(`${size}: ${((performance.now() - reloadStart) / 1000).toFixed(2)} s`);
    if ((await reopened.count('bench')) !== size) throw new Error('reloaded index lost entries');
    await reopened.close();
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
console.log('\n* dense vectors only (float32); postings and text come on top.');
console.log(`journal reload at start-up: ${reloadSeconds.join(', ')}`);
