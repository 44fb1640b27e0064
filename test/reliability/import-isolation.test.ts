// Tenant isolation under a bulk import: while one organization imports a ~10 MB knowledge base
// through the admin API, another organization's searches keep their latency. Embedded stack
// (gateway, tickets, knowledge as separate processes; the embedded index). Prints the other
// organization's search latencies during the import (docs/performance.md has the figures).
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { mulberry32 } from '@support-agent/shared';
import { Stack } from '../support/stack.js';

const IMPORT_BYTES = 10 * 1024 * 1024 - 64 * 1024;
const SEARCHES_PER_SECOND = 20;
/** The target: another organization's search p99 during the import, on a quiet machine. */
const TARGET_P99_MS = 100;
/** A machine counts as quiet below this 1-minute load average when the import starts. */
const QUIET_LOAD = Number(process.env.IMPORT_ISOLATION_QUIET_LOAD ?? 2);
/** The bound on a loaded machine (before the time slicing: 2.4–3.3 s), where the target is not judged. */
const P99_LIMIT_MS = Number(process.env.IMPORT_ISOLATION_P99_LIMIT_MS ?? 1500);

const dir = mkdtempSync(join(tmpdir(), 'import-isolation-'));
let stack: Stack;

const WORDS = [
  'account',
  'billing',
  'export',
  'invoice',
  'password',
  'reset',
  'login',
  'team',
  'member',
  'report',
  'schedule',
  'webhook',
  'token',
  'region',
  'backup',
  'restore',
  'quota',
  'upgrade',
  'refund',
  'payment',
  'language',
  'timezone',
  'archive',
  'sync',
  'mobile',
  'email',
];

/** JSON lines of synthetic entries, `bytes` long at most (fixed seed: same data every run). */
function importBody(bytes: number): { body: string; entries: number } {
  const random = mulberry32(7);
  const word = () => WORDS[Math.floor(random() * WORDS.length)]!;
  const sentence = (n: number) => Array.from({ length: n }, word).join(' ');
  const lines: string[] = [];
  let size = 0;
  for (let i = 0; ; i++) {
    const answer = Array.from({ length: 20 }, () => `${sentence(14)}.`).join(' ');
    const line = JSON.stringify({
      id: `bulk-${i}`,
      question: `How do I ${sentence(6)}?`,
      answer,
      tags: [word(), word()],
    });
    if (size + line.length + 1 > bytes) break;
    lines.push(line);
    size += line.length + 1;
  }
  return { body: `${lines.join('\n')}\n`, entries: lines.length };
}

const percentile = (sorted: number[], p: number) =>
  sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;

before(async () => {
  stack = await new Stack({
    dir,
    services: ['tickets', 'knowledge'],
    env: { DIGEST_SCHEDULER_ENABLED: 'false' },
  }).start();
});

after(async () => {
  await stack?.stop();
  rmSync(dir, { recursive: true, force: true });
});

test(`when one organization imports a 10 MB knowledge base, then another's search p99 stays under ${TARGET_P99_MS} ms on a quiet machine`, async () => {
  const big = 'bulk-org';
  await stack.orgWithKey(big);
  const key = await stack.orgWithKey('searching-org', ['kb:read'], {
    rate_limit_per_key_per_min: 100_000,
    rate_limit_per_org_per_min: 100_000,
  });
  await stack.admin('POST', '/admin/v1/orgs/searching-org/kb/entries', [
    { id: 'pw', question: 'How do I reset my password?', answer: 'Settings > Security > Reset.' },
    { id: 'inv', question: 'Where are my invoices?', answer: 'Billing > Invoices.' },
  ]);
  const { body, entries } = importBody(IMPORT_BYTES);

  const slow: string[] = [];
  let t0 = 0;
  const search = async (): Promise<number> => {
    const started = performance.now();
    const res = await fetch(`${stack.baseUrl()}/api/v1/agent/kb/search?query=reset+password`, {
      headers: { authorization: `Bearer ${key}` },
    });
    await res.arrayBuffer();
    assert.equal(res.status, 200);
    const ms = performance.now() - started;
    if (t0 && ms > 300) slow.push(`${((started - t0) / 1000).toFixed(1)}s:${ms.toFixed(0)}`);
    return ms;
  };
  for (let i = 0; i < 20; i++) await search(); // warm-up
  const idle: number[] = [];
  for (let i = 0; i < 40; i++) idle.push(await search());

  const during: Promise<number>[] = [];
  let importing = true;
  const ticker = setInterval(() => {
    if (importing) during.push(search());
  }, 1000 / SEARCHES_PER_SECOND);
  const load = loadavg()[0]!;
  const started = performance.now();
  t0 = started;
  const res = await fetch(`${stack.adminUrl()}/admin/v1/orgs/${big}/kb/entries`, {
    method: 'POST',
    headers: {
      authorization: `Bearer ${stack.adminToken}`,
      'content-type': 'application/x-ndjson',
    },
    body,
  });
  const result = (await res.json()) as { inserted: number; failed: unknown[] };
  const importMs = performance.now() - started;
  importing = false;
  clearInterval(ticker);
  const latencies = (await Promise.all(during)).sort((a, b) => a - b);
  idle.sort((a, b) => a - b);
  assert.equal(res.status, 200, JSON.stringify(result).slice(0, 500));
  assert.equal(result.inserted, entries);

  const fmt = (ms: number) => ms.toFixed(1);
  console.log(
    `import-isolation: ${(Buffer.byteLength(body) / 1024 / 1024).toFixed(1)} MB, ${entries} entries imported in ${(importMs / 1000).toFixed(1)} s; ` +
      `other organization's searches during it: n=${latencies.length} p50=${fmt(percentile(latencies, 50))} ` +
      `p99=${fmt(percentile(latencies, 99))} max=${fmt(latencies.at(-1)!)} ms ` +
      `(idle before: p50=${fmt(percentile(idle, 50))} p99=${fmt(percentile(idle, 99))} ms; ` +
      `load average ${load.toFixed(2)} when it began)`,
  );
  const quiet = load < QUIET_LOAD;
  if (!quiet)
    console.log(
      `import-isolation: the ${TARGET_P99_MS} ms target was not checked: load average ${load.toFixed(2)} >= ${QUIET_LOAD} (bound ${P99_LIMIT_MS} ms instead)`,
    );
  if (process.env.IMPORT_ISOLATION_DEBUG) console.log(`slow: ${slow.join(' ')}`);
  assert.ok(latencies.length >= 10, 'searches ran during the import');
  const limit = quiet ? TARGET_P99_MS : P99_LIMIT_MS;
  assert.ok(
    percentile(latencies, 99) <= limit,
    `p99 ${fmt(percentile(latencies, 99))} ms > ${limit} ms (load average ${load.toFixed(2)})`,
  );
});
