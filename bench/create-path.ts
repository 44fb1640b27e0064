// A focused experiment on the create path: MariaDB, Redis, NATS, the gateway and the
// tickets service only (no consumers), autocannon POST /tickets with an Idempotency-Key.
// Prints requests/s, latency and CPU ms per request of every process.
//   npx tsx bench/create-path.ts [seconds=10] [connections=32]
// SERVICE_NODE_OPTIONS sets the services' NODE_OPTIONS, SERVICE_ENV=K=V,K=V more of their
// environment (memory experiments).
// BENCH_CPU_PROF=1 writes a CPU profile per service into bench/results/profiles-create-<ts>.
import type autocannon from 'autocannon';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { ensureBackendPackages, startBackends } from '../test/support/backends.js';
import { ALL_SCOPES, Stack } from '../test/support/stack.js';
import { autocannonRun, type ProcessRef } from './lib/measure.js';

const seconds = Number(process.argv[2] ?? 10);
const connections = Number(process.argv[3] ?? 32);
const profileDir =
  process.env.BENCH_CPU_PROF === '1'
    ? resolve(`bench/results/profiles-create-${new Date().toISOString().replace(/[:.]/g, '-')}`)
    : undefined;

await ensureBackendPackages();
const dir = mkdtempSync(join(tmpdir(), 'create-path-'));
const backends = await startBackends(dir);
const stack = new Stack({
  dir,
  mysqlUrl: backends.mysql.url,
  redisUrl: backends.redis.url,
  natsUrl: backends.nats.url,
  services: ['tickets'],
  env: {
    LOG_LEVEL: process.env.BENCH_LOG_LEVEL ?? 'info',
    ...(process.env.SERVICE_NODE_OPTIONS ? { NODE_OPTIONS: process.env.SERVICE_NODE_OPTIONS } : {}),
    ...Object.fromEntries(
      (process.env.SERVICE_ENV ?? '')
        .split(',')
        .filter(Boolean)
        .map((kv) => kv.split('=') as [string, string]),
    ),
    ...(profileDir
      ? {
          NODE_OPTIONS: `--import=${resolve('bench/lib/cpu-profile-preload.mjs')}`,
          BENCH_PROFILE_DIR: profileDir,
        }
      : {}),
  },
});
try {
  await stack.start();
  const key = await stack.orgWithKey('bench', ALL_SCOPES, {
    rate_limit_per_key_per_min: 1_000_000,
    rate_limit_per_org_per_min: 10_000_000,
    deflection_monthly_limit: 2_000_000_000,
  });
  const processes = (): ProcessRef[] => [
    ...stack.gateways.map((g) => ({ name: 'gateway', pid: g.pid })),
    ...[...stack.upstreams.values()].map((p) => ({ name: p.name, pid: p.pid })),
    { name: 'load-client', pid: process.pid },
    { name: 'mariadb', pid: backends.mysql.pid },
    { name: 'redis', pid: backends.redis.pid },
    { name: 'nats', pid: backends.nats.pid },
  ];
  const opts: autocannon.Options = {
    url: `${stack.baseUrl()}/api/v1/agent/tickets`,
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ content: 'My export to CSV fails with a timeout after 30 seconds.' }),
    requests: [
      {
        setupRequest: (req: autocannon.Request) => ({
          ...req,
          headers: { ...req.headers, 'idempotency-key': randomUUID() },
        }),
      },
    ],
  };
  for (let i = 0; i < Number(process.env.ROUNDS ?? 2); i++) {
    const run = await autocannonRun(
      'create (gateway + tickets only)',
      opts,
      { seconds, connections, maxRequests: 200_000, warmupSeconds: 2 },
      processes,
    );
    console.log(`  ${''.padEnd(40)} peak RSS MB: ${JSON.stringify(run.peakRssMb)}`);
  }
} finally {
  await stack.stop();
  await backends.stop();
  rmSync(dir, { recursive: true, force: true });
  if (profileDir) console.log(`profiles: ${profileDir}`);
}
