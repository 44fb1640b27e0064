// Search latency, throughput and CPU per search of the embedded index (the `npm start`
// backend) at 1k, 10k and 100k entries in one organization, through the domain use case
// (query analysis + hashed query embedding + candidates + reranking), in this process.
// Synthetic text is generated here (Zipf-distributed pseudo-words), never taken
// from evaluation data.
//
//   npx tsx services/knowledge/bench/search-bench.ts [sizes=1000,10000,100000] [queries=1000]
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createLogger } from '@support-agent/shared';
import { EmbeddedIndex } from '../src/data-access/embedded-index/index.js';
import { HashedEmbeddings } from '../src/data-access/hashed-embeddings.js';
import { collectionName } from '../src/domain/fingerprint.js';
import { searchEntries, type KnowledgeDeps } from '../src/domain/search.js';
import { upsertEntries } from '../src/domain/upsert.js';
import { entry, queryFor, random } from '../../../bench/synthetic-kb.js';

const sizes = (process.argv[2] ?? '1000,10000,100000').split(',').map(Number);
const queryCount = Number(process.argv[3] ?? 1000);

const percentile = (sorted: number[], p: number) =>
  sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))]!;

const logger = createLogger('knowledge-bench', 'warn');
const reloadSeconds: string[] = [];
console.log(
  `embedded index search benchmark (node ${process.version}, ${queryCount} queries per size, limit 5)\n`,
);
console.log(
  'entries   import/s   index MB*   search p50   search p99   searches/s   CPU ms/search   RSS MB   avg results',
);
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
    const cpu = process.cpuUsage();
    const started = performance.now();
    for (const q of queries) {
      const t = performance.now();
      results += (await searchEntries(deps, { orgId: 'bench', query: q, limit: 5 })).length;
      latencies.push(performance.now() - t);
    }
    const seconds = (performance.now() - started) / 1000;
    const used = process.cpuUsage(cpu);
    const cpuMs = (used.user + used.system) / 1000 / queries.length;
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
        cpuMs.toFixed(3).padStart(15),
        (process.memoryUsage().rss / 1e6).toFixed(0).padStart(8),
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
console.log(
  '\n* dense vectors only (float32); postings and text come on top. RSS: this process, which also holds the synthetic entries it imported.',
);
console.log(`journal reload at start-up: ${reloadSeconds.join(', ')}`);
