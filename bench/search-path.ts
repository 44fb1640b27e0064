// A focused experiment on the search path: MariaDB and Redis (keys, rate limits), the gateway
// and the knowledge service only, a KB of 1,000 synthetic entries; autocannon GET /kb/search
// next to the bare Node server answering the same bytes. Prints requests/s, latency and CPU ms
// per request of every process, and the ratio the target is about.
//   npx tsx bench/search-path.ts [seconds=10] [connections=32]
// BENCH_CPU_PROF=1 writes a CPU profile per service into bench/results/profiles-search-<ts>.
import type autocannon from 'autocannon';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { ensureBackendPackages, startBackends } from '../test/support/backends.js';
import { ALL_SCOPES, Stack, api } from '../test/support/stack.js';
import { BareServer, DirectGrpc } from './lib/baselines.js';
import { autocannonRun, httpCaller, openLoop, type ProcessRef } from './lib/measure.js';
import { entry, queryFor, random } from './synthetic-kb.js';

const seconds = Number(process.argv[2] ?? 10);
const connections = Number(process.argv[3] ?? 32);
const profileDir =
  process.env.BENCH_CPU_PROF === '1'
    ? resolve(`bench/results/profiles-search-${new Date().toISOString().replace(/[:.]/g, '-')}`)
    : undefined;

await ensureBackendPackages();
const dir = mkdtempSync(join(tmpdir(), 'search-path-'));
const backends = await startBackends(dir);
const stack = new Stack({
  dir,
  mysqlUrl: backends.mysql.url,
  redisUrl: backends.redis.url,
  natsUrl: backends.nats.url,
  services: ['tickets', 'knowledge'],
  env: {
    LOG_LEVEL: process.env.BENCH_LOG_LEVEL ?? 'info',
    ...(process.env.SERVICE_NODE_OPTIONS ? { NODE_OPTIONS: process.env.SERVICE_NODE_OPTIONS } : {}),
    ...(profileDir
      ? {
          NODE_OPTIONS: `--import=${resolve('bench/lib/cpu-profile-preload.mjs')}`,
          BENCH_PROFILE_DIR: profileDir,
        }
      : {}),
  },
});
let bare: BareServer | undefined;
try {
  await stack.start();
  const key = await stack.orgWithKey('bench', ALL_SCOPES, {
    rate_limit_per_key_per_min: 1_000_000,
    rate_limit_per_org_per_min: 10_000_000,
    deflection_monthly_limit: 2_000_000_000,
  });
  const entries = Array.from({ length: 1000 }, (_, i) => entry(i));
  await stack.admin('POST', '/admin/v1/orgs/bench/kb/entries', entries);
  const queries = Array.from({ length: 500 }, () =>
    queryFor(entries[Math.floor(random() * entries.length)]!.question),
  );
  const path = (q: string) => `/api/v1/agent/kb/search?limit=5&query=${encodeURIComponent(q)}`;
  const sample = await api(stack.baseUrl(), 'GET', path(queries[0]!), { key });
  if (sample.status !== 200) throw new Error(`search failed: ${sample.status} ${sample.text}`);
  bare = await BareServer.start(sample.text);
  const processes = (): ProcessRef[] => [
    ...stack.gateways.map((g) => ({ name: 'gateway', pid: g.pid })),
    ...[...stack.upstreams.values()].map((p) => ({ name: p.name, pid: p.pid })),
    ...(bare ? [{ name: 'bare-node', pid: bare.pid }] : []),
    { name: 'load-client', pid: process.pid },
    { name: 'mariadb', pid: backends.mysql.pid },
    { name: 'redis', pid: backends.redis.pid },
  ];
  let q = 0;
  const opts: autocannon.Options = {
    url: stack.baseUrl(),
    headers: { authorization: `Bearer ${key}` },
    requests: [
      { setupRequest: (req: autocannon.Request) => ({ ...req, path: path(queries[q++ % 500]!) }) },
    ],
  };
  const load = { seconds, connections, maxRequests: 500_000, warmupSeconds: 2 };
  const rate = Number(process.env.MODERATE_RATE ?? 0);
  if (rate > 0) {
    // Gateway overhead at moderate load: the same open-loop rate direct and through the gateway.
    const direct = new DirectGrpc({
      knowledge: stack.addresses.KNOWLEDGE_ADDR!,
      tickets: stack.addresses.TICKETS_ADDR!,
      digest: stack.addresses.TICKETS_ADDR!,
    });
    const client = httpCaller(stack.baseUrl(), 64);
    const auth = { authorization: `Bearer ${key}` };
    const d50: number[] = [];
    const d99: number[] = [];
    for (let round = 0; round < Number(process.env.ROUNDS ?? 3); round++) {
      const a = await openLoop(
        'direct (moderate)',
        rate,
        seconds,
        1e6,
        async (i) => {
          await direct.search('bench', queries[i % 500]!);
          return true;
        },
        processes,
      );
      const g = await openLoop(
        'gateway (moderate)',
        rate,
        seconds,
        1e6,
        (i) => client.request('GET', path(queries[i % 500]!), auth),
        processes,
      );
      d50.push(g.p50 - a.p50);
      d99.push(g.p99 - a.p99);
    }
    const med = (xs: number[]) => [...xs].sort((x, y) => x - y)[Math.floor((xs.length - 1) / 2)]!;
    console.log(
      `  overhead p50 +${med(d50).toFixed(2)} ms, p99 +${med(d99).toFixed(2)} ms (medians of rounds)`,
    );
    client.close();
    direct.close();
  }
  for (let i = 0; i < Number(process.env.ROUNDS ?? 1); i++) {
    const b = await autocannonRun(
      `bare node (${sample.text.length} B)`,
      { url: bare.url },
      load,
      processes,
    );
    const s = await autocannonRun('search via gateway', opts, load, processes);
    if (process.env.EXTRA === '1') {
      await autocannonRun('GET /healthz', { url: `${stack.baseUrl()}/healthz` }, load, processes);
      await autocannonRun(
        'search, no key (401)',
        { url: `${stack.baseUrl()}${path(queries[0]!)}` },
        load,
        processes,
      );
    }
    console.log(
      `  ratio ${(s.rps / b.rps).toFixed(3)}; peak RSS MB ${JSON.stringify(s.peakRssMb)}`,
    );
  }
} finally {
  await bare?.stop();
  await stack.stop();
  await backends.stop();
  rmSync(dir, { recursive: true, force: true });
  if (profileDir) console.log(`profiles: ${profileDir}`);
}
