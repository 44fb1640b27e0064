// A/B of two gateway builds on one stack: this build's gateway and another build's (a copy of
// its services/gateway with dist/, openapi/, static/ and package.json, placed under the
// repository so it finds node_modules, e.g. .tmp-exp/gateway-base), in front of the same
// MariaDB, Redis, tickets and knowledge, loaded AT THE SAME TIME with KB search (autocannon,
// half the connections each). On a shared machine whose load changes from minute to minute,
// CPU per request of two processes measured over the same seconds compares far better than
// runs taken one after the other. Also counts each gateway's garbage collections and the bytes
// it allocated per request (lib/gc-stats-preload.mjs; start-up included, the same for both),
// and checks that both answer a search with the same bytes.
//   npx tsx bench/gateway-ab.ts <other gateway dir> [seconds=8] [rounds=6]
//   KB_ENTRIES (1000; 5 makes knowledge cheap, so the gateways set the pace), CONNECTIONS (32)
import autocannon from 'autocannon';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { ensureBackendPackages, startBackends } from '../test/support/backends.js';
import { ServiceProcess } from '../test/support/process.js';
import { ALL_SCOPES, Stack, api } from '../test/support/stack.js';
import { CpuMeter, median, UNLIMITED } from './lib/measure.js';
import { otherBuildArgs, startOtherGateway, untilReady } from './lib/other-gateway.js';
import { entry, queryFor, random } from './synthetic-kb.js';

const { other, seconds, rounds } = otherBuildArgs('gateway-ab.ts', 6);
const kbEntries = Number(process.env.KB_ENTRIES ?? 1000);
const connections = Number(process.env.CONNECTIONS ?? 32);

await ensureBackendPackages();
const dir = mkdtempSync(join(tmpdir(), 'gateway-ab-'));
const backends = await startBackends(join(dir, 'b'));
const stack = new Stack({
  dir,
  mysqlUrl: backends.mysql.url,
  redisUrl: backends.redis.url,
  natsUrl: backends.nats.url,
  services: ['tickets', 'knowledge'],
  env: { LOG_LEVEL: 'info', NODE_OPTIONS: `--import=${resolve('bench/lib/gc-stats-preload.mjs')}` },
});
let b: ServiceProcess | undefined;
try {
  await stack.start();
  const key = await stack.orgWithKey('bench', ALL_SCOPES, UNLIMITED);
  // The same environment as this build's gateway, on ports of its own.
  const started = await startOtherGateway(other, stack.gateways[0]!.env, join(dir, 'logs'));
  b = started.proc;
  const urls = { A: stack.baseUrl(), B: started.url };
  await untilReady(urls.B);

  const entries = Array.from({ length: kbEntries }, (_, i) => entry(i));
  for (let i = 0; i < entries.length; i += 1000)
    await stack.admin('POST', '/admin/v1/orgs/bench/kb/entries', entries.slice(i, i + 1000));
  const queries = Array.from({ length: 500 }, () =>
    queryFor(entries[Math.floor(random() * entries.length)]!.question),
  );
  const path = (i: number) =>
    `/api/v1/agent/kb/search?limit=5&query=${encodeURIComponent(queries[i % queries.length]!)}`;
  const [sa, sb] = [
    await api(urls.A, 'GET', path(0), { key }),
    await api(urls.B, 'GET', path(0), { key }),
  ];
  if (sa.status !== 200 || sa.text !== sb.text)
    throw new Error(`the gateways answer differently: ${sa.status} ${sb.status}`);

  let q = 0;
  const load = (url: string, duration: number) =>
    autocannon({
      url,
      connections: connections / 2,
      duration,
      headers: { authorization: `Bearer ${key}` },
      requests: [{ setupRequest: (req: autocannon.Request) => ({ ...req, path: path(q++) }) }],
    });
  const gateways = () => [
    { name: 'A', pid: stack.gateways[0]!.pid },
    { name: 'B', pid: b!.pid },
  ];
  const cpu: Record<'A' | 'B', number[]> = { A: [], B: [] };
  for (let round = 1; round <= rounds; round++) {
    await Promise.all([load(urls.A, 2), load(urls.B, 2)]);
    const meter = new CpuMeter(gateways).start();
    const [ra, rb] = await Promise.all([load(urls.A, seconds), load(urls.B, seconds)]);
    const a = meter.perRequest(ra.requests.total).A!;
    const bb = meter.perRequest(rb.requests.total).B!;
    cpu.A.push(a);
    cpu.B.push(bb);
    console.log(
      `round ${round}: gateway CPU ms per search: A ${a} (${ra.requests.total} searches), B ${bb} (${rb.requests.total})`,
    );
  }
  console.log(`A (this build):   CPU ms per search ${cpu.A.join(', ')}; median ${median(cpu.A)}`);
  console.log(`B (${other}): CPU ms per search ${cpu.B.join(', ')}; median ${median(cpu.B)}`);
} finally {
  await b?.stop();
  await stack.stop();
  await backends.stop();
  for (const [name, file] of [
    ['A', 'gateway-0.log'],
    ['B', 'gateway-b.log'],
  ] as const) {
    const log = readFileSync(join(dir, 'logs', file), 'utf8');
    const stats = /GCSTATS (.*)/.exec(log);
    if (!stats) continue;
    const { minor, major, allocatedMb } = JSON.parse(stats[1]!) as {
      minor: number[];
      major: number[];
      allocatedMb: number;
    };
    const requests = (log.match(/"request completed"/g) ?? []).length;
    const perThousand = (x: number) => ((1000 * x) / requests).toFixed(1);
    const minorMs = minor.reduce((sum, ms) => sum + ms, 0);
    console.log(
      `${name}: ${requests} requests; ${minor.length} young-generation collections (${perThousand(minor.length)} per 1,000 requests, pausing it ${perThousand(minorMs)} ms), ${major.length} full ones; ${((1e3 * allocatedMb) / requests).toFixed(1)} KB allocated per request`,
    );
  }
  rmSync(dir, { recursive: true, force: true });
}
