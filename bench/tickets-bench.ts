// Benchmark (not a test): create and list throughput and latency through the
// gateway with real MariaDB, Redis and NATS, and list latency at 1k vs 1M
// tickets in one organization. Bounded in time and requests; loopback only.
//
//   npm run bench                      defaults below
//   BENCH_SECONDS=5 BENCH_SCALE_ROWS=100000 npm run bench
import autocannon from 'autocannon';
import { randomUUID } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir, cpus, totalmem } from 'node:os';
import { join } from 'node:path';
import { ensureBackendPackages, startBackends } from '../test/support/backends.js';
import { Stack, api } from '../test/support/stack.js';
import { seedTickets } from './lib/seed.js';

const SECONDS = Number(process.env.BENCH_SECONDS ?? 10);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 32);
const SCALE_ROWS = Number(process.env.BENCH_SCALE_ROWS ?? 1_000_000);
const MAX_REQUESTS = 200_000; // hard bound per run, whatever the duration

interface Result {
  name: string;
  requests: number;
  rps: number;
  p50: number;
  p99: number;
  errors: number;
  non2xx: number;
}

async function run(name: string, opts: autocannon.Options): Promise<Result> {
  const r = await autocannon({
    duration: SECONDS,
    connections: CONNECTIONS,
    ...opts,
    maxOverallRequests: MAX_REQUESTS,
  });
  const res: Result = {
    name,
    requests: r.requests.total,
    rps: Math.round(r.requests.average),
    p50: r.latency.p50,
    p99: r.latency.p99,
    errors: r.errors + r.timeouts,
    non2xx: r.non2xx,
  };
  console.log(
    `${name.padEnd(34)} ${String(res.rps).padStart(7)} req/s  p50 ${String(res.p50).padStart(4)} ms  p99 ${String(res.p99).padStart(4)} ms  errors ${res.errors}  non-2xx ${res.non2xx}  (${res.requests} requests)`,
  );
  return res;
}

async function main(): Promise<void> {
  await ensureBackendPackages();
  const dir = mkdtempSync(join(tmpdir(), 'support-agent-bench-'));
  const backends = await startBackends(join(dir, 'backends'));
  const stack = new Stack({
    dir,
    mysqlUrl: backends.mysql.url,
    redisUrl: backends.redis.url,
    natsUrl: backends.nats.url,
    env: { LOG_LEVEL: 'warn' },
  });
  const results: Result[] = [];
  try {
    await stack.start();
    const unlimited = {
      rate_limit_per_key_per_min: 1_000_000,
      rate_limit_per_org_per_min: 1_000_000,
    };
    const key = await stack.orgWithKey('bench', undefined, unlimited);
    const base = stack.baseUrl();
    const headers = { authorization: `Bearer ${key}`, 'content-type': 'application/json' };
    console.log(
      `machine: ${cpus().length} cores (${cpus()[0]?.model}), ${Math.round(totalmem() / 2 ** 30)} GiB; ${SECONDS}s per run, ${CONNECTIONS} connections`,
    );

    results.push(
      await run('create ticket (idempotency key)', {
        url: `${base}/api/v1/agent/tickets`,
        method: 'POST',
        headers,
        body: JSON.stringify({
          content: 'My export to CSV fails with a timeout after 30 seconds.',
        }),
        requests: [
          {
            setupRequest: (req: autocannon.Request) => ({
              ...req,
              headers: { ...req.headers, 'idempotency-key': randomUUID() },
            }),
          },
        ],
      }),
    );
    results.push(
      await run('list tickets (limit=20)', {
        url: `${base}/api/v1/agent/tickets?limit=20`,
        headers,
      }),
    );

    // Data scale: the same page queries at 1k and at SCALE_ROWS tickets.
    for (const [org, rows] of [
      ['scale-1k', 1_000],
      [`scale-${SCALE_ROWS}`, SCALE_ROWS],
    ] as const) {
      const t0 = Date.now();
      const orgKey = await stack.orgWithKey(org, undefined, unlimited);
      await seedTickets(backends.mysql.url, org, rows);
      console.log(
        `seeded ${rows} tickets for ${org} in ${((Date.now() - t0) / 1000).toFixed(1)} s`,
      );
      const h = { authorization: `Bearer ${orgKey}` };
      // A cursor half-way through the data: deep pages must cost the same as the first.
      let cursor: string | null = null;
      const hops = Math.min(25, Math.floor(rows / 40));
      for (let i = 0; i < hops; i++) {
        const q: string = cursor ? `&cursor=${encodeURIComponent(cursor)}` : '';
        cursor = (await api(base, 'GET', `/api/v1/agent/tickets?limit=20${q}`, { key: orgKey }))
          .json.next_cursor;
      }
      results.push(
        await run(`list first page @ ${rows}`, {
          url: `${base}/api/v1/agent/tickets?limit=20`,
          headers: h,
          connections: 8,
        }),
      );
      results.push(
        await run(`list status=open @ ${rows}`, {
          url: `${base}/api/v1/agent/tickets?limit=20&status=open`,
          headers: h,
          connections: 8,
        }),
      );
      if (cursor)
        results.push(
          await run(`list deep page @ ${rows}`, {
            url: `${base}/api/v1/agent/tickets?limit=20&cursor=${encodeURIComponent(cursor)}`,
            headers: h,
            connections: 8,
          }),
        );
    }
    const small = results.find((r) => r.name === 'list first page @ 1000')!;
    const big = results.find((r) => r.name === `list first page @ ${SCALE_ROWS}`)!;
    console.log(
      `list p99 ratio ${SCALE_ROWS} vs 1000 tickets: ${(big.p99 / Math.max(1, small.p99)).toFixed(2)}`,
    );
    mkdirSync('bench/results', { recursive: true });
    const out = join(
      'bench/results',
      `tickets-${new Date().toISOString().replace(/[:.]/g, '-')}.json`,
    );
    writeFileSync(
      out,
      JSON.stringify({ seconds: SECONDS, connections: CONNECTIONS, results }, null, 2),
    );
    console.log(`report: ${out}`);
  } finally {
    await stack.stop();
    await backends.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
