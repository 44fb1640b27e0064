// Search quality in process: imports an FAQ test collection into the embedded index
// through the domain layer and prints MRR@5, nDCG@5 and thread Hit@5 for this
// project's retrieval and for a plain BM25 computed in the same run.
// Not a test file (evaluation data is measured on, never trained on):
//
//   npx tsx services/knowledge/test/quality.eval.ts [corpus.jsonl queries.jsonl qrels.jsonl]
//
// Defaults to StackFAQ's dev split in ../shared/data/stackfaq (or STACKFAQ_DIR).
// KB_EVAL_BACKEND=qdrant runs the same through the Qdrant adapter instead: against
// QDRANT_URL when set, else against the OpenAPI-validating stand-in of the tests.
// KB_EVAL_QUANTIZE_ABOVE=0 keeps the embedded index's dense vectors as int8 from the start.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createLogger } from '@support-agent/shared';
import { HashedEmbeddings } from '../src/data-access/hashed-embeddings.js';
import { EmbeddedIndex } from '../src/data-access/embedded-index/index.js';
import { createQdrantClient, QdrantCatalog, QdrantIndex } from '../src/data-access/qdrant-index.js';
import type { KnowledgeIndex } from '../src/domain/ports.js';
import { QdrantStandIn } from '../../../test/support/qdrant-standin.js';
import { collectionName } from '../src/domain/fingerprint.js';
import { searchEntries, type KnowledgeDeps } from '../src/domain/search.js';
import { upsertEntries } from '../src/domain/upsert.js';
import {
  bm25Rankings,
  evaluateRankings,
  formatComparison,
  K,
  loadEvalCollection,
  type RankedQuery,
} from '@support-agent/quality';

const repoRoot = resolve(fileURLToPath(new URL('../../..', import.meta.url)));
const dataDir = process.env.STACKFAQ_DIR ?? resolve(repoRoot, '../shared/data/stackfaq');
const [corpusPath, queriesPath, qrelsPath] =
  process.argv.length >= 5
    ? process.argv.slice(2, 5)
    : [
        join(dataDir, 'corpus.jsonl'),
        join(dataDir, 'queries-dev.jsonl'),
        join(dataDir, 'qrels-dev.jsonl'),
      ];

const { corpus, queries, judgements } = loadEvalCollection(corpusPath!, queriesPath!, qrelsPath!);
const tmp = mkdtempSync(join(tmpdir(), 'kb-quality-'));
try {
  const embeddings = new HashedEmbeddings();
  const backend = process.env.KB_EVAL_BACKEND ?? 'embedded';
  let index: KnowledgeIndex;
  let cleanup = async () => {};
  if (backend === 'qdrant') {
    const standIn = process.env.QDRANT_URL ? undefined : await QdrantStandIn.start();
    const client = createQdrantClient({
      url: process.env.QDRANT_URL ?? standIn!.url,
      apiKey: process.env.QDRANT_API_KEY,
      timeoutMs: 30_000,
    });
    const prefix = `kbeval-${Date.now().toString(36)}`;
    index = new QdrantIndex({
      client,
      collection: collectionName(prefix, embeddings.fingerprint),
      fingerprint: embeddings.fingerprint,
    });
    cleanup = async () => {
      await new QdrantCatalog(client, prefix).drop(index.collection);
      if (standIn && standIn.violations.length > 0)
        console.error('OpenAPI violations:', standIn.violations.slice(0, 5));
      await standIn?.stop();
    };
  } else {
    index = new EmbeddedIndex({
      dir: tmp,
      collection: collectionName('kb', embeddings.fingerprint),
      dimensions: embeddings.dimensions,
      // KB_EVAL_QUANTIZE_ABOVE=0 evaluates int8 dense vectors (what organizations above
      // 8,192 entries get) on this smaller collection.
      ...(process.env.KB_EVAL_QUANTIZE_ABOVE
        ? { quantizeAbove: Number(process.env.KB_EVAL_QUANTIZE_ABOVE) }
        : {}),
      // KB_EVAL_EXACT_DENSE_BUDGET=0: candidates from the inverted index only (what
      // organizations over the brute-force dense pass's budget get).
      ...(process.env.KB_EVAL_EXACT_DENSE_BUDGET
        ? { exactDenseBudget: Number(process.env.KB_EVAL_EXACT_DENSE_BUDGET) }
        : {}),
    });
  }
  await index.init();
  const deps: KnowledgeDeps = {
    index,
    embeddings,
    logger: createLogger('knowledge-eval', 'warn'),
    now: Date.now,
  };
  const orgId = 'eval';
  for (let i = 0; i < corpus.length; i += 500) {
    const chunk = corpus
      .slice(i, i + 500)
      .map((c) => ({ id: c.faq_id, question: c.question, answer: c.answer, tags: [] }));
    const res = await upsertEntries(deps, orgId, chunk);
    if (res.failed.length > 0)
      throw new Error(`import failed: ${JSON.stringify(res.failed.slice(0, 3))}`);
  }

  const started = performance.now();
  const project: RankedQuery[] = [];
  for (const q of queries) {
    const results = await searchEntries(deps, { orgId, query: q.text, limit: K });
    project.push({
      queryId: q.query_id,
      threadId: q.thread_id,
      ranking: results.map((r) => r.entryId),
    });
  }
  const elapsed = performance.now() - started;

  const baseline = bm25Rankings({ corpus, queries }, K);

  console.log(`collection: ${corpus.length} entries, ${queries.length} queries (${corpusPath})`);
  console.log(`project search: ${(elapsed / queries.length).toFixed(2)} ms/query in process\n`);
  console.log(
    formatComparison(K, [
      {
        name: `project (${embeddings.fingerprint.provider}/${embeddings.fingerprint.model}/${embeddings.dimensions}, ${backend})`,
        metrics: evaluateRankings(project, judgements, K),
      },
      {
        name: 'BM25 baseline (k1=1.2, b=0.75)',
        metrics: evaluateRankings(baseline, judgements, K),
      },
    ]),
  );
  await index.close();
  await cleanup();
} finally {
  rmSync(tmp, { recursive: true, force: true });
}
