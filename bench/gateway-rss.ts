// Peak RSS of two gateway builds under the bench's operations, on one stack and loaded at the
// same time (as bench/gateway-ab.ts; the other build is any directory holding a built
// services/gateway with node_modules around it, e.g. a second worktree of an older commit).
// Per round and operation (search, FAQ, list, create with an Idempotency-Key, each at
// CONNECTIONS per gateway), each gateway's peak RSS (/proc/<pid>/status VmRSS, as the bench
// samples it), the peaks of its heap parts (lib/memory-peaks-preload.mjs: heap, young
// generation, external, array buffers) and its CPU per request; medians and ranges at the end.
//   npx tsx bench/gateway-rss.ts <other gateway dir> [seconds=8] [rounds=3]
//   CONNECTIONS (32), OPS (search,faq,list,create), SEED_TICKETS (1000: the digest's week),
//   SERVICE_ENV_A / SERVICE_ENV_B ('K=V K2=V2': more environment for one gateway)
import { digest } from '@support-agent/proto';
import { createDigestClient } from '@support-agent/shared';
import autocannon from 'autocannon';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { ensureBackendPackages, startBackends } from '../test/support/backends.js';
import { ServiceProcess } from '../test/support/process.js';
import { ALL_SCOPES, Stack, api } from '../test/support/stack.js';
import { CpuMeter, RssSampler, UNLIMITED, median, type ProcessRef } from './lib/measure.js';
import { envAssignments } from './lib/experiment.js';
import { otherBuildArgs, startOtherGateway, untilReady } from './lib/other-gateway.js';
import { mondayOf, ticketTexts } from './lib/seed.js';
import { entry, queryFor, random } from './synthetic-kb.js';

const { other, seconds, rounds } = otherBuildArgs('gateway-rss.ts', 3);
const connections = Number(process.env.CONNECTIONS ?? 32);
const ops = (process.env.OPS ?? 'search,faq,list,create').split(',');
const seedTickets = Number(process.env.SEED_TICKETS ?? 1000);

await ensureBackendPackages();
const dir = mkdtempSync(join(tmpdir(), 'gateway-rss-'));
const backends = await startBackends(join(dir, 'b'));
const preload = `--import=${resolve('bench/lib/memory-peaks-preload.mjs')}`;
const stack = new Stack({
  dir,
  mysqlUrl: backends.mysql.url,
  redisUrl: backends.redis.url,
  natsUrl: backends.nats.url,
  services: ['tickets', 'knowledge', 'digest'],
  env: { LOG_LEVEL: 'info', DIGEST_SCHEDULER_ENABLED: 'false', NODE_OPTIONS: preload },
});
let b: ServiceProcess | undefined;
try {
  await stack.start();
  const key = await stack.orgWithKey('bench', ALL_SCOPES, UNLIMITED);
  const a = stack.gateways[0]!;
  // SERVICE_ENV_A applies from a restart, with the same ports.
  if (process.env.SERVICE_ENV_A) {
    await a.stop();
    a.start(envAssignments(process.env.SERVICE_ENV_A));
  }
  const started = await startOtherGateway(
    other,
    a.env,
    join(dir, 'logs'),
    envAssignments(process.env.SERVICE_ENV_B),
  );
  b = started.proc;
  const gateways = {
    A: { proc: a, url: stack.baseUrl() },
    B: { proc: b, url: started.url },
  };
  for (const g of Object.values(gateways)) await untilReady(g.url);

  // The bench's set-up: 1,000 KB entries, SEED_TICKETS tickets through the API, their week's digest.
  const entries = Array.from({ length: 1000 }, (_, i) => entry(i));
  await stack.admin('POST', '/admin/v1/orgs/bench/kb/entries', entries);
  const queries = Array.from({ length: 500 }, () =>
    queryFor(entries[Math.floor(random() * entries.length)]!.question),
  );
  const texts = ticketTexts(Math.max(seedTickets, 1000));
  for (let i = 0; i < seedTickets; i += 16)
    await Promise.all(
      texts.slice(i, Math.min(i + 16, seedTickets)).map((content) =>
        api(gateways.A.url, 'POST', '/api/v1/agent/tickets', {
          key,
          headers: { 'idempotency-key': randomUUID() },
          body: { content },
        }),
      ),
    );
  await sleep(3000); // the digest's consumer takes the tickets' events in
  await stack.admin('POST', '/admin/v1/orgs/bench/digests', { week_start: mondayOf(new Date()) });
  const digestClient = createDigestClient(stack.addresses.DIGEST_ADDR!);
  const latest = await digestClient.getLatestDigest({ orgId: 'bench' });
  digestClient.close();
  console.log(
    `GetLatestDigest response: ${digest.GetLatestDigestResponse.encode(latest).finish().length} B, ` +
      `content ${Buffer.byteLength(latest.digest?.content ?? '')} B, ${latest.digest?.summary?.topics.length ?? 0} topics`,
  );
  for (const [name, path] of [
    ['search', `/api/v1/agent/kb/search?limit=5&query=${encodeURIComponent(queries[0]!)}`],
    ['faq', '/api/v1/agent/faq'],
    ['list', '/api/v1/agent/tickets?limit=20'],
  ] as const) {
    const [ra, rb] = [
      await api(gateways.A.url, 'GET', path, { key }),
      await api(gateways.B.url, 'GET', path, { key }),
    ];
    console.log(
      `${name}: ${ra.status} ${Buffer.byteLength(ra.text)} B (B: ${rb.status} ${Buffer.byteLength(rb.text)} B)`,
    );
  }

  let q = 0;
  const requestOf: Record<string, autocannon.Request> = {
    search: {
      setupRequest: (req) => ({
        ...req,
        path: `/api/v1/agent/kb/search?limit=5&query=${encodeURIComponent(queries[q++ % queries.length]!)}`,
      }),
    },
    faq: { path: '/api/v1/agent/faq' },
    list: { path: '/api/v1/agent/tickets?limit=20' },
    create: {
      method: 'POST',
      setupRequest: (req) => ({
        ...req,
        path: '/api/v1/agent/tickets',
        headers: {
          ...req.headers,
          'content-type': 'application/json',
          'idempotency-key': randomUUID(),
        },
        body: JSON.stringify({ content: texts[q++ % texts.length] }),
      }),
    },
  };
  const load = (url: string, op: string, duration: number) =>
    autocannon({
      url,
      connections,
      duration,
      headers: { authorization: `Bearer ${key}` },
      requests: [requestOf[op]!],
    });
  const refs = (): ProcessRef[] => [
    { name: 'A', pid: a.pid },
    { name: 'B', pid: b!.pid },
  ];
  // Each gateway prints its peaks since the last signal (asynchronously: read after a pause).
  const memPeaks = async (...procs: ServiceProcess[]): Promise<Array<Record<string, number>>> => {
    for (const p of procs) if (p.pid) process.kill(p.pid, 'SIGUSR2');
    await sleep(300);
    return procs.map(lastPeaks);
  };
  const lastPeaks = (proc: ServiceProcess): Record<string, number> => {
    const lines = proc.logs().match(/MEMPEAKS (.*)/g) ?? [];
    return lines.length ? (JSON.parse(lines.at(-1)!.slice(9)) as Record<string, number>) : {};
  };
  type Row = { rss: number; cpu: number; rps: number; mem: Record<string, number> };
  const rows: Record<string, Record<'A' | 'B', Row[]>> = {};
  for (let round = 1; round <= rounds; round++)
    for (const op of ops) {
      await Promise.all([load(gateways.A.url, op, 2), load(gateways.B.url, op, 2)]);
      await memPeaks(a, gateways.B.proc);
      const rss = new RssSampler(refs).start();
      const cpu = new CpuMeter(refs).start();
      const [ra, rb] = await Promise.all([
        load(gateways.A.url, op, seconds),
        load(gateways.B.url, op, seconds),
      ]);
      const peak = rss.stop();
      const cpuMs = cpu.perRequest(1);
      const [ma, mb] = await memPeaks(a, gateways.B.proc);
      const r = (rows[op] ??= { A: [], B: [] });
      for (const [name, res, mem] of [
        ['A', ra, ma!],
        ['B', rb, mb!],
      ] as const) {
        const errors = res.errors + res.timeouts + res.non2xx;
        r[name].push({
          rss: peak[name]!,
          cpu: (cpuMs[name] ?? 0) / Math.max(1, res.requests.total),
          rps: res.requests.average,
          mem: { ...mem, errors },
        });
      }
      console.log(
        `round ${round} ${op}: ` +
          (['A', 'B'] as const)
            .map((n) => {
              const x = r[n].at(-1)!;
              return `${n} peak RSS ${x.rss} MB, ${x.cpu.toFixed(3)} ms CPU/req, ${x.rps} req/s, ${JSON.stringify(x.mem)}`;
            })
            .join(' | '),
      );
    }
  console.log(
    `\nA = this build, B = ${other}; medians [ranges] over ${rounds} rounds, ${connections} connections each`,
  );
  for (const [op, r] of Object.entries(rows))
    for (const n of ['A', 'B'] as const) {
      const xs = r[n];
      const range = (f: (x: Row) => number) =>
        `${median(xs.map(f))} [${Math.min(...xs.map(f))}–${Math.max(...xs.map(f))}]`;
      console.log(
        `${op.padEnd(7)} ${n}: peak RSS ${range((x) => x.rss)} MB; CPU/req ${range((x) => Math.round(1000 * x.cpu) / 1000)} ms; ` +
          `heap in RAM ${range((x) => x.mem.heapPhysical ?? 0)} (used ${range((x) => x.mem.heapUsed ?? 0)}), outside the heap ${range((x) => x.mem.rssOutsideHeap ?? 0)}, new_space ${range((x) => x.mem.new_space ?? 0)}, external ${range((x) => x.mem.external ?? 0)}, arrayBuffers ${range((x) => x.mem.arrayBuffers ?? 0)} MB`,
      );
    }
} finally {
  await b?.stop();
  await stack.stop();
  await backends.stop();
  rmSync(dir, { recursive: true, force: true });
}
