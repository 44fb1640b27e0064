// Search quality end to end, through the real HTTP API:
//
//   npm run eval:search -- <corpus.jsonl> <queries.jsonl> <qrels.jsonl>
//
// Imports the corpus into a fresh organization through the admin API (entry id =
// faq_id), creates a kb:read key, runs every query through the public
// `GET /api/v1/agent/kb/search?limit=5`, maps results back to faq ids by exact
// (question, answer), and prints MRR@5 and nDCG@5 (entry level) and Hit@5 (thread
// level) for this project next to a plain BM25 computed here on the same data.
//
// Environment: BASE_URL (http://127.0.0.1:8080), ADMIN_URL (http://127.0.0.1:8081),
// ADMIN_TOKEN (default: the contents of $DATA_DIR/admin-token, DATA_DIR=./data).
// The evaluation data is only read, never copied into the product.
import {
  bm25Rankings,
  evaluateRankings,
  formatComparison,
  K,
  loadEvalCollection,
  type RankedQuery,
} from '@support-agent/quality';
import { BASE_URL, call, createEvalOrg, mapConcurrently } from './lib/eval-api.js';

async function main(): Promise<void> {
  const [corpusPath, queriesPath, qrelsPath] = process.argv.slice(2);
  if (!corpusPath || !queriesPath || !qrelsPath) {
    console.error('usage: npm run eval:search -- <corpus.jsonl> <queries.jsonl> <qrels.jsonl>');
    process.exit(2);
  }
  const { corpus, queries, judgements } = loadEvalCollection(corpusPath, queriesPath, qrelsPath);

  const { orgId, key: apiKey } = await createEvalOrg('search-eval', corpus, ['kb:read']);

  // The public response has no entry id: map (question, answer) back to faq ids.
  const idsByText = new Map<string, string[]>();
  for (const c of corpus) {
    const key = `${c.question}\u0000${c.answer}`;
    idsByText.set(key, [...(idsByText.get(key) ?? []), c.faq_id]);
  }

  const latencies: number[] = [];
  let unmapped = 0;
  const project: RankedQuery[] = await mapConcurrently(queries, async (q) => {
    const url = `${BASE_URL}/api/v1/agent/kb/search?query=${encodeURIComponent(q.text)}&limit=${K}`;
    const started = performance.now();
    const { body } = await call<{
      results: { question: string; answer: string; score: number }[];
    }>(url, { token: apiKey });
    latencies.push(performance.now() - started);
    const ranking: string[] = [];
    for (const r of body.results) {
      const id = (idsByText.get(`${r.question}\u0000${r.answer}`) ?? []).find(
        (candidate) => !ranking.includes(candidate),
      );
      if (id === undefined) unmapped++;
      ranking.push(id ?? `unmapped:${ranking.length}`);
    }
    return { queryId: q.query_id, threadId: q.thread_id, ranking };
  });

  const baseline = bm25Rankings({ corpus, queries }, K);

  latencies.sort((a, b) => a - b);
  const pct = (p: number) =>
    latencies[Math.min(latencies.length - 1, Math.floor(p * latencies.length))]!.toFixed(1);
  console.log(
    `organization ${orgId}: ${corpus.length} entries imported, ${queries.length} queries via ${BASE_URL}`,
  );
  console.log(
    `HTTP search latency p50 ${pct(0.5)} ms, p99 ${pct(0.99)} ms${unmapped ? `; ${unmapped} results not mapped to an entry` : ''}\n`,
  );
  console.log(
    formatComparison(K, [
      { name: 'project (HTTP API)', metrics: evaluateRankings(project, judgements, K) },
      {
        name: 'BM25 baseline (k1=1.2, b=0.75)',
        metrics: evaluateRankings(baseline, judgements, K),
      },
    ]),
  );
}

main().catch((err: unknown) => {
  console.error(`eval-search: ${err instanceof Error ? err.message : String(err)}`);
  process.exit(1);
});
