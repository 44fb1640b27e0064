// Weekly-digest quality end to end, through the real pipeline:
//
//   npm run eval:digest -- [--seeds 5] [--questions 20] [--gaps 5] [--floor 0.5] [--real]
//                          [--half a|b] [--data ../shared/data/stackfaq] [--queries queries-dev.jsonl]
//
// For each seed, a fresh organization gets the StackFAQ corpus as its KB (admin API), then a
// week of tickets through the public API: `--questions` dev threads picked at random, each
// asked by 1–10 of its paraphrased dev queries, all shuffled. Tickets travel tickets → events →
// triage → digest like any other; the digest of the current ISO week is built through the admin
// API and its structured form (topics with ticket ids) is scored against the threads:
//   - topics per question (topics / questions) and the most topics one question was split into;
//   - pairwise precision / recall / F1 (pairs of tickets in one topic vs in one thread);
//   - the share of tickets in a topic shown with a KB answer, and with their own thread's answer.
// A second pass (`--gaps`, 0 to skip) removes that many of the week's questions from the KB:
// their tickets should end up in "unanswered" topics (a KB article is missing).
// `--half a|b` draws the weeks from every other dev thread only (sorted by id, a = 1st, 3rd, …),
// to check that a setting chosen on the dev files holds on both halves of them.
// `--data scripts/data/digest-paraphrases --queries queries.jsonl` runs the same weeks on a
// source the settings were never chosen on: questions of the demo KB (services/gateway), each
// asked in 5–6 wordings written for this project (one thread per KB entry).
//
// Stack: BASE_URL, ADMIN_URL and ADMIN_TOKEN point it at a running stack; otherwise it starts
// one of its own on free ports (embedded adapters, or with --real throwaway MariaDB, Redis and
// NATS, or the MYSQL_URL / REDIS_URL / NATS_URL given) and passes `--floor` to the digest as
// DIGEST_KB_SCORE_FLOOR, and any DIGEST_* variable of its environment as is.
// Evaluation data is only read, never copied into the product.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { mapConcurrently, sleep } from '@support-agent/shared';
import type { CorpusEntry, EvalQuery } from '@support-agent/quality';
import { startBackends, type Backends } from '../test/support/backends.js';
import { api, Stack } from '../test/support/stack.js';
import {
  drawWeek,
  MAX_TICKETS_PER_QUESTION,
  readCollection,
  report,
  scoreWeek,
  type DigestTopic,
  type WeekResult,
} from './lib/digest-weeks.js';

const { values: args } = parseArgs({
  options: {
    seeds: { type: 'string', default: '5' },
    questions: { type: 'string', default: '20' },
    gaps: { type: 'string', default: '5' },
    floor: { type: 'string' },
    real: { type: 'boolean', default: false },
    half: { type: 'string' },
    data: { type: 'string', default: resolve('../shared/data/stackfaq') },
    queries: { type: 'string', default: 'queries-dev.jsonl' },
  },
});
const SEEDS = Number(args.seeds);
const QUESTIONS = Number(args.questions);
const GAPS = Number(args.gaps);
const CONCURRENCY = 4;
const ALL_SCOPES = ['kb:read', 'faq:read', 'tickets:read', 'tickets:write'];

interface Target {
  baseUrl: string;
  admin<T>(method: string, path: string, body?: unknown): Promise<T>;
}

async function waitUntil(what: string, check: () => Promise<boolean>, ms = 120_000): Promise<void> {
  for (const until = Date.now() + ms; Date.now() < until; await sleep(500)) {
    if (await check()) return;
  }
  throw new Error(`timed out waiting for ${what}`);
}

function mondayOf(now: Date): string {
  const midnight = Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate());
  return new Date(midnight - ((now.getUTCDay() + 6) % 7) * 86_400_000).toISOString().slice(0, 10);
}

async function runWeek(
  target: Target,
  corpus: CorpusEntry[],
  byThread: Map<string, EvalQuery[]>,
  seed: number,
  gaps: number,
): Promise<WeekResult> {
  const { tickets, removed } = drawWeek(byThread, seed, QUESTIONS, gaps);
  const org = `dg-eval-${seed}-${gaps}-${Date.now().toString(36)}`;
  await target.admin('POST', '/admin/v1/orgs', { id: org, name: `Digest evaluation ${org}` });
  await target.admin('PATCH', `/admin/v1/orgs/${org}/settings`, {
    rate_limit_per_key_per_min: 100_000,
    rate_limit_per_org_per_min: 100_000,
  });
  const { key } = await target.admin<{ key: string }>('POST', `/admin/v1/orgs/${org}/keys`, {
    name: 'digest-eval',
    scopes: ALL_SCOPES,
  });
  const kb = corpus
    .filter((c) => !removed.has(c.thread_id))
    .map((c) => ({ id: c.faq_id, question: c.question, answer: c.answer }));
  const imported = await target.admin<{ inserted: number; failed: unknown[] }>(
    'POST',
    `/admin/v1/orgs/${org}/kb/entries`,
    kb,
  );
  if (imported.failed.length > 0 || imported.inserted !== kb.length)
    throw new Error(`KB import: ${JSON.stringify(imported).slice(0, 300)}`);

  const weekStart = mondayOf(new Date());
  const threadOf = new Map<number, string>();
  await mapConcurrently(tickets, CONCURRENCY, async (q) => {
    const res = await api(target.baseUrl, 'POST', '/api/v1/agent/tickets', {
      key,
      body: { content: q.text },
    });
    if (res.status !== 201) throw new Error(`create ticket → ${res.status} ${res.text}`);
    threadOf.set(res.json.ticket_id as number, q.thread_id);
  });
  if (mondayOf(new Date()) !== weekStart) throw new Error('the ISO week changed during the run');

  // Triage first (it decides the automatic answers), then the digest's count.
  await waitUntil('triage of every ticket', async () => {
    let triaged = 0;
    let cursor: string | null = null;
    do {
      const page = await api(
        target.baseUrl,
        'GET',
        `/api/v1/agent/tickets?limit=20${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`,
        { key },
      );
      triaged += (page.json.tickets as Array<{ ai_summary: string | null }>).filter(
        (t) => t.ai_summary !== null,
      ).length;
      cursor = page.json.next_cursor as string | null;
    } while (cursor);
    return triaged === tickets.length;
  });
  const build = () =>
    target.admin<{
      ticket_count: number;
      summary: { topics: DigestTopic[]; answered_automatically: number };
    }>('POST', `/admin/v1/orgs/${org}/digests`, { week_start: weekStart });
  await waitUntil('the digest to count every ticket', async () => {
    return (await build()).ticket_count === tickets.length;
  });
  await sleep(1_000); // the last triage events reach the digest
  const started = performance.now();
  const digest = await build();
  const buildMs = performance.now() - started;
  return {
    ...scoreWeek(digest.summary.topics, threadOf, corpus, removed),
    autoAnswered: digest.summary.answered_automatically / tickets.length,
    buildMs,
  };
}

async function openTarget(): Promise<{ target: Target; close(): Promise<void>; mode: string }> {
  const { BASE_URL, ADMIN_URL, ADMIN_TOKEN } = process.env;
  if (BASE_URL && ADMIN_URL && ADMIN_TOKEN) {
    return {
      mode: `running stack at ${BASE_URL}`,
      target: {
        baseUrl: BASE_URL.replace(/\/+$/, ''),
        async admin<T>(method: string, path: string, body?: unknown) {
          const res = await fetch(`${ADMIN_URL.replace(/\/+$/, '')}${path}`, {
            method,
            headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' },
            ...(body === undefined ? {} : { body: JSON.stringify(body) }),
          });
          const text = await res.text();
          if (!res.ok) throw new Error(`admin ${method} ${path} → ${res.status} ${text}`);
          return (text ? JSON.parse(text) : undefined) as T;
        },
      },
      close: async () => undefined,
    };
  }
  const dir = mkdtempSync(join(tmpdir(), 'eval-digest-'));
  let backends: Backends | undefined;
  let urls = {
    mysqlUrl: process.env.MYSQL_URL,
    redisUrl: process.env.REDIS_URL,
    natsUrl: process.env.NATS_URL,
  };
  if (args.real && !urls.mysqlUrl) {
    backends = await startBackends(join(dir, 'backends'));
    urls = {
      mysqlUrl: backends.mysql.url,
      redisUrl: backends.redis.url,
      natsUrl: backends.nats.url,
    };
  }
  const defined = Object.fromEntries(Object.entries(urls).filter(([, v]) => v)) as Record<
    string,
    string
  >;
  const stack = await new Stack({
    dir,
    ...defined,
    env: {
      // DIGEST_* settings of this environment reach the digest (e.g. DIGEST_TOPIC_THRESHOLD).
      ...Object.fromEntries(
        Object.entries(process.env).filter(
          (e): e is [string, string] => e[0].startsWith('DIGEST_') && e[1] !== undefined,
        ),
      ),
      DIGEST_SCHEDULER_ENABLED: 'false',
      ...(args.floor !== undefined ? { DIGEST_KB_SCORE_FLOOR: args.floor } : {}),
    },
  }).start();
  return {
    mode: urls.mysqlUrl ? 'real backends (MariaDB, Redis, NATS)' : 'embedded adapters',
    target: {
      baseUrl: stack.baseUrl(),
      admin: <T>(method: string, path: string, body?: unknown) =>
        stack.admin<T>(method, path, body),
    },
    async close() {
      await stack.stop();
      await backends?.stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

async function main(): Promise<void> {
  const { corpus, byThread } = readCollection(args.data, args.queries);
  if (args.half !== undefined) {
    if (args.half !== 'a' && args.half !== 'b') throw new Error('--half must be a or b');
    const keep = args.half === 'a' ? 0 : 1;
    [...byThread.keys()].sort().forEach((t, i) => i % 2 !== keep && byThread.delete(t));
  }
  if (byThread.size < QUESTIONS)
    throw new Error(`${QUESTIONS} questions a week, but only ${byThread.size} dev threads`);
  const { target, close, mode } = await openTarget();
  try {
    console.log(
      `digest evaluation: ${mode}; ${SEEDS} weeks of ${QUESTIONS} questions of ${args.data} (1–${MAX_TICKETS_PER_QUESTION} tickets each)` +
        (args.half !== undefined ? `, drawn from half ${args.half} of the dev threads` : '') +
        (args.floor !== undefined ? `; DIGEST_KB_SCORE_FLOOR=${args.floor}` : ''),
    );
    const full: WeekResult[] = [];
    for (let seed = 1; seed <= SEEDS; seed++)
      full.push(await runWeek(target, corpus, byThread, seed, 0));
    report('KB answers every question', full);
    if (GAPS > 0) {
      const gapped: WeekResult[] = [];
      for (let seed = 1; seed <= SEEDS; seed++)
        gapped.push(await runWeek(target, corpus, byThread, seed, GAPS));
      report(`${GAPS} of the ${QUESTIONS} questions removed from the KB`, gapped);
    }
  } finally {
    await close();
  }
}

main().catch((err: unknown) => {
  console.error(`eval-digest: ${err instanceof Error ? err.message : String(err)}`);
  process.exit(1);
});
