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
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Bm25Baseline } from '../services/knowledge/src/eval/bm25-baseline.js';
import { loadEvalCollection } from '../services/knowledge/src/eval/eval-data.js';
import {
  evaluateRankings,
  formatComparison,
  type RankedQuery,
} from '../services/knowledge/src/eval/retrieval-metrics.js';

const K = 5;
/** Bytes of JSON per import request: well under the API's 64 KiB body limit. */
const IMPORT_CHUNK_BYTES = 48 * 1024;
const CONCURRENCY = 4;

const BASE_URL = (process.env.BASE_URL ?? 'http://127.0.0.1:8080').replace(/\/+$/, '');
const ADMIN_URL = (process.env.ADMIN_URL ?? 'http://127.0.0.1:8081').replace(/\/+$/, '');

function adminToken(): string {
  if (process.env.ADMIN_TOKEN) return process.env.ADMIN_TOKEN;
  const path = join(process.env.DATA_DIR ?? './data', 'admin-token');
  try {
    return readFileSync(path, 'utf8').trim();
  } catch {
    throw new Error(
      `no ADMIN_TOKEN and no readable ${path}: start the stack with \`npm start\` or set ADMIN_TOKEN`,
    );
  }
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** fetch with JSON in and out; retries 429 (Retry-After) and 503 a few times. */
async function call<T>(
  url: string,
  init: { method?: string; token: string; body?: unknown; allow?: number[] },
): Promise<{ status: number; body: T }> {
  for (let attempt = 0; ; attempt++) {
    const res = await fetch(url, {
      method: init.method ?? 'GET',
      headers: {
        authorization: `Bearer ${init.token}`,
        ...(init.body !== undefined ? { 'content-type': 'application/json' } : {}),
      },
      ...(init.body !== undefined ? { body: JSON.stringify(init.body) } : {}),
    });
    const text = await res.text();
    if ((res.status === 429 || res.status === 503) && attempt < 8) {
      const retryAfter = Number(res.headers.get('retry-after'));
      await sleep(
        Number.isFinite(retryAfter) && retryAfter > 0 ? retryAfter * 1000 : 250 * 2 ** attempt,
      );
      continue;
    }
    let body: unknown;
    try {
      body = text.length > 0 ? JSON.parse(text) : undefined;
    } catch {
      body = text;
    }
    if (!res.ok && !(init.allow ?? []).includes(res.status)) {
      throw new Error(`${init.method ?? 'GET'} ${url} → ${res.status}: ${text.slice(0, 300)}`);
    }
    return { status: res.status, body: body as T };
  }
}

/** Splits entries into JSON arrays of at most `maxBytes`. */
function chunksBySize<T>(items: T[], maxBytes: number): T[][] {
  const chunks: T[][] = [];
  let current: T[] = [];
  let size = 2;
  for (const item of items) {
    const n = Buffer.byteLength(JSON.stringify(item)) + 1;
    if (current.length > 0 && size + n > maxBytes) {
      chunks.push(current);
      current = [];
      size = 2;
    }
    current.push(item);
    size += n;
  }
  if (current.length > 0) chunks.push(current);
  return chunks;
}

async function main(): Promise<void> {
  const [corpusPath, queriesPath, qrelsPath] = process.argv.slice(2);
  if (!corpusPath || !queriesPath || !qrelsPath) {
    console.error('usage: npm run eval:search -- <corpus.jsonl> <queries.jsonl> <qrels.jsonl>');
    process.exit(2);
  }
  const { corpus, queries, judgements } = loadEvalCollection(corpusPath, queriesPath, qrelsPath);
  const admin = adminToken();

  // A fresh organization, so nothing else in the KB affects the numbers.
  const orgId = `search-eval-${Date.now().toString(36)}`;
  await call(`${ADMIN_URL}/admin/v1/orgs`, {
    method: 'POST',
    token: admin,
    body: { name: `Search evaluation ${new Date().toISOString()}`, id: orgId },
  });
  // The evaluation sends hundreds of searches a minute; lift the per-key and per-org limits if the API allows it.
  const settings = await call(`${ADMIN_URL}/admin/v1/orgs/${orgId}/settings`, {
    method: 'PATCH',
    token: admin,
    body: { rate_limit_per_key_per_min: 100_000, rate_limit_per_org_per_min: 100_000 },
    allow: [400, 404, 405],
  });
  if (settings.status !== 200)
    console.error(
      `note: could not raise rate limits (${settings.status}); 429s will be waited out`,
    );
  const { body: created } = await call<{ key: string }>(
    `${ADMIN_URL}/admin/v1/orgs/${orgId}/keys`,
    {
      method: 'POST',
      token: admin,
      body: { name: 'search-eval', scopes: ['kb:read'] },
    },
  );

  let inserted = 0;
  for (const chunk of chunksBySize(
    corpus.map((c) => ({ id: c.faq_id, question: c.question, answer: c.answer })),
    IMPORT_CHUNK_BYTES,
  )) {
    const { body } = await call<{
      inserted: number;
      updated: number;
      failed: { line: number; message: string }[];
    }>(`${ADMIN_URL}/admin/v1/orgs/${orgId}/kb/entries`, {
      method: 'POST',
      token: admin,
      body: chunk,
    });
    if (body.failed.length > 0)
      throw new Error(`import failed: ${JSON.stringify(body.failed.slice(0, 3))}`);
    inserted += body.inserted + body.updated;
  }
  if (inserted !== corpus.length)
    throw new Error(`imported ${inserted} of ${corpus.length} entries`);

  // The public response has no entry id: map (question, answer) back to faq ids.
  const idsByText = new Map<string, string[]>();
  for (const c of corpus) {
    const key = `${c.question}\u0000${c.answer}`;
    idsByText.set(key, [...(idsByText.get(key) ?? []), c.faq_id]);
  }

  const project: RankedQuery[] = new Array(queries.length);
  const latencies: number[] = [];
  let unmapped = 0;
  let next = 0;
  const worker = async () => {
    while (next < queries.length) {
      const i = next++;
      const q = queries[i]!;
      const url = `${BASE_URL}/api/v1/agent/kb/search?query=${encodeURIComponent(q.text)}&limit=${K}`;
      const started = performance.now();
      const { body } = await call<{
        results: { question: string; answer: string; score: number }[];
      }>(url, { token: created.key });
      latencies.push(performance.now() - started);
      const ranking: string[] = [];
      for (const r of body.results) {
        const id = (idsByText.get(`${r.question}\u0000${r.answer}`) ?? []).find(
          (candidate) => !ranking.includes(candidate),
        );
        if (id === undefined) unmapped++;
        ranking.push(id ?? `unmapped:${ranking.length}`);
      }
      project[i] = { queryId: q.query_id, threadId: q.thread_id, ranking };
    }
  };
  await Promise.all(Array.from({ length: CONCURRENCY }, worker));

  const bm25 = new Bm25Baseline(
    corpus.map((c) => ({ id: c.faq_id, text: `${c.question} ${c.answer}` })),
  );
  const baseline: RankedQuery[] = queries.map((q) => ({
    queryId: q.query_id,
    threadId: q.thread_id,
    ranking: bm25.search(q.text, K),
  }));

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
