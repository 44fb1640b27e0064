// Benchmark (not a test): KB search through the gateway (HTTP → auth → rate limit →
// gRPC → knowledge) on the embedded index at 1k, 10k and 100k entries in one
// organization each. Bounded in time and requests; loopback only.
//
//   npx tsx bench/search-bench.ts                 sizes 1000,10000,100000
//   BENCH_SIZES=1000,10000 BENCH_SECONDS=5 npx tsx bench/search-bench.ts
import autocannon from 'autocannon';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Stack } from '../test/support/stack.js';
import { entry, queryFor, random } from './synthetic-kb.js';

const SIZES = (process.env.BENCH_SIZES ?? '1000,10000,100000').split(',').map(Number);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 10);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 8);

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'support-agent-search-bench-'));
  const stack = new Stack({ dir, services: ['tickets', 'knowledge'], env: { LOG_LEVEL: 'warn' } });
  try {
    await stack.start();
    console.log(
      `KB search through the gateway, embedded index, ${SECONDS}s per size, ${CONNECTIONS} connections, limit 5`,
    );
    console.log('entries   import s  conns   req/s    p50 ms   p99 ms   errors  non-2xx');
    for (const size of SIZES) {
      const org = `search-${size}`;
      const key = await stack.orgWithKey(org, ['kb:read'], {
        rate_limit_per_key_per_min: 1_000_000,
        rate_limit_per_org_per_min: 1_000_000,
      });
      const entries = Array.from({ length: size }, (_, i) => entry(i));
      const t0 = Date.now();
      for (let i = 0; i < entries.length; i += 1000) {
        const res = await stack.admin<{ failed: unknown[] }>(
          'POST',
          `/admin/v1/orgs/${org}/kb/entries`,
          entries.slice(i, i + 1000),
        );
        if (res.failed.length > 0)
          throw new Error(`import failed: ${JSON.stringify(res.failed[0])}`);
      }
      const importSeconds = (Date.now() - t0) / 1000;
      // A fixed pool of paraphrased queries, cycled by the load generator.
      const queries = Array.from({ length: 500 }, () =>
        queryFor(entries[Math.floor(random() * entries.length)]!.question),
      );
      let n = 0;
      const load = (connections: number) =>
        autocannon({
          url: stack.baseUrl(),
          duration: SECONDS,
          connections,
          maxOverallRequests: 200_000,
          headers: { authorization: `Bearer ${key}` },
          requests: [
            {
              setupRequest: (req: autocannon.Request) => ({
                ...req,
                path: `/api/v1/agent/kb/search?limit=5&query=${encodeURIComponent(queries[n++ % queries.length]!)}`,
              }),
            },
          ],
        });
      // One connection measures latency without queueing; CONNECTIONS measures throughput.
      for (const connections of [1, CONNECTIONS]) {
        const r = await load(connections);
        console.log(
          [
            String(size).padEnd(8),
            importSeconds.toFixed(1).padStart(9),
            String(connections).padStart(6),
            Math.round(r.requests.average).toString().padStart(7),
            String(r.latency.p50).padStart(9),
            String(r.latency.p99).padStart(8),
            String(r.errors + r.timeouts).padStart(8),
            String(r.non2xx).padStart(8),
          ].join(' '),
        );
      }
    }
  } finally {
    await stack.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
