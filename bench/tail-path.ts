// A focused experiment on the p99 overhead at moderate load (issue 21: ≤ +5 ms for search and
// list): the gateway, tickets and knowledge on real MariaDB, Redis and NATS, 1,000 KB entries
// and 1,000 tickets, open loops at a moderate rate direct (gRPC from this process) and through
// the gateway, as bench/run.ts measures it. Latency alone says little on a shared machine, so
// around every measured run each process reports what its own pauses were
// (lib/loop-stats.mjs, preloaded by lib/loop-stats-preload.mjs and read back by SIGUSR2): its
// garbage-collection pauses (count, total, longest), MB allocated and promoted per 1,000
// requests, and its event loop's delay p50/p99/max. The load client (this process) reports the
// same. With VARIANTS the services are restarted with each variant's environment before its
// turn, alternating within every round (the order rotates), so variants meet the same minutes
// of the machine.
//   npx tsx bench/tail-path.ts [seconds=10] [rounds=3]
// RATE=n (req/s; default: BENCH_MODERATE_FRACTION (0.25) × the slower path's throughput with 4
// closed loops, measured once per operation at the start, as bench/run.ts does);
// OPS=search,list; VARIANTS='A=gateway:K=V,tickets:K=V;B=' (an empty variant keeps the
// defaults). Knobs shared by the experiments: bench/lib/experiment.ts.
import { resolve } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { DirectGrpc } from './lib/baselines.js';
import { startExperiment } from './lib/experiment.js';
import { LoopStats, type LoopStatsWindow } from './lib/loop-stats.mjs';
import { closedLoop, httpCaller, median, openLoop, type ProcessRef } from './lib/measure.js';
import { seedBenchOrg } from './lib/seed.js';

const SECONDS = Number(process.argv[2] ?? 10);
const ROUNDS = Number(process.argv[3] ?? 3);
const FRACTION = Number(process.env.BENCH_MODERATE_FRACTION ?? 0.25);
const OPS = (process.env.OPS ?? 'search,list').split(',') as Op[];
const SERVICES = ['gateway', 'tickets', 'knowledge'] as const;
const PRELOAD = `--import=${resolve('bench/lib/loop-stats-preload.mjs')}`;
type Op = 'search' | 'list';
type Service = (typeof SERVICES)[number];

/** 'A=gateway:K=V,tickets:K=V;B=' as named environments per service. */
const variants = (process.env.VARIANTS ?? 'default=').split(';').map((v) => {
  const env: Partial<Record<Service, Record<string, string>>> = {};
  for (const item of v
    .slice(v.indexOf('=') + 1)
    .split(',')
    .filter(Boolean)) {
    const service = item.slice(0, item.indexOf(':')) as Service;
    const kv = item.slice(item.indexOf(':') + 1);
    if (!SERVICES.includes(service)) throw new Error(`VARIANTS: unknown service in ${item}`);
    (env[service] ??= {})[kv.slice(0, kv.indexOf('='))] = kv.slice(kv.indexOf('=') + 1);
  }
  return { name: v.slice(0, v.indexOf('=')) || v, env };
});

const { stack, backends, key, processes, stop } = await startExperiment(
  'tail-path',
  ['tickets', 'knowledge'],
  'info',
);
const self = new LoopStats();
const direct = new DirectGrpc({
  knowledge: stack.addresses.KNOWLEDGE_ADDR!,
  tickets: stack.addresses.TICKETS_ADDR!,
  digest: stack.addresses.TICKETS_ADDR!,
});
const client = httpCaller(stack.baseUrl(), 256);
try {
  const queries = await seedBenchOrg(stack, backends.mysql.url);
  const auth = { authorization: `Bearer ${key}` };
  const paths: Record<
    Op,
    { direct(i: number): Promise<boolean>; gateway(i: number): Promise<boolean> }
  > = {
    search: {
      direct: async (i) => (await direct.search('bench', queries[i % 500]!), true),
      gateway: (i) =>
        client.request(
          'GET',
          `/api/v1/agent/kb/search?limit=5&query=${encodeURIComponent(queries[i % 500]!)}`,
          auth,
        ),
    },
    list: {
      direct: async () => (await direct.listTickets('bench', 20), true),
      gateway: () => client.request('GET', '/api/v1/agent/tickets?limit=20', auth),
    },
  };

  const rate: Partial<Record<Op, number>> = {};
  for (const op of OPS) {
    const fixed = Number(process.env.RATE ?? 0);
    if (fixed > 0) rate[op] = fixed;
    else {
      const d = await closedLoop(`${op} direct (4 loops)`, 4, 5, 1e6, paths[op].direct, processes);
      const g = await closedLoop(
        `${op} via gateway (4 loops)`,
        4,
        5,
        1e6,
        paths[op].gateway,
        processes,
      );
      rate[op] = Math.max(10, Math.round(Math.min(d.rps, g.rps) * FRACTION));
    }
    console.log(`${op}: open loops at ${rate[op]} req/s`);
  }

  const rows: Row[] = [];
  for (let round = 1; round <= ROUNDS; round++) {
    // Rotate the order so no variant always runs first (right after a restart of another).
    const order = variants.map((_, i) => variants[(i + round - 1) % variants.length]!);
    for (const variant of order) {
      if (variants.length > 1 || round === 1) await restartWith(variant.env);
      for (const op of OPS) {
        // Warm-up (the JIT after a restart, the connections), then the measured pair.
        await openLoop('warm-up', rate[op]!, 3, 1e6, paths[op].gateway, () => [], 0);
        const d = await measured(
          `${op} direct, ${variant.name}, round ${round}`,
          rate[op]!,
          paths[op].direct,
        );
        const g = await measured(
          `${op} via gateway, ${variant.name}, round ${round}`,
          rate[op]!,
          paths[op].gateway,
        );
        rows.push({ variant: variant.name, op, round, direct: d, gateway: g });
        const gw = g.stats.gateway;
        const perRequest = (mb: number) => ((mb * 1024) / g.run.requests).toFixed(1);
        console.log(
          `  ${op} ${variant.name} round ${round}: overhead p50 ${sign(g.run.p50 - d.run.p50)} ms, p99 ${sign(g.run.p99 - d.run.p99)} ms` +
            (gw
              ? `; gateway allocated ${perRequest(gw.allocatedMb)} KB, promoted ${perRequest(gw.promotedMb)} KB per request, paused ${gw.gcPauseMs} ms`
              : ''),
        );
      }
    }
  }
  summarize(rows);
} finally {
  client.close();
  direct.close();
  await stop();
}

interface Measured {
  run: Awaited<ReturnType<typeof openLoop>>;
  stats: Record<string, LoopStatsWindow>;
}
interface Row {
  variant: string;
  op: Op;
  round: number;
  direct: Measured;
  gateway: Measured;
}

/** Restarts the services with the preload and `env` (their own settings otherwise). */
async function restartWith(env: Partial<Record<Service, Record<string, string>>>): Promise<void> {
  const start = (
    proc: { env: Record<string, string>; start(e: Record<string, string>): void },
    s: Service,
  ) => {
    const own = env[s] ?? {};
    const nodeOptions = [proc.env.NODE_OPTIONS, own.NODE_OPTIONS, PRELOAD]
      .filter(Boolean)
      .join(' ');
    proc.start({ ...own, NODE_OPTIONS: nodeOptions });
  };
  await Promise.all([
    stack.gateways[0]!.stop(),
    stack.service('tickets').stop(),
    stack.service('knowledge').stop(),
  ]);
  start(stack.service('tickets'), 'tickets');
  start(stack.service('knowledge'), 'knowledge');
  await Promise.all([stack.waitForService('tickets'), stack.waitForService('knowledge')]);
  start(stack.gateways[0]!, 'gateway');
  await stack.waitForGateway(0);
}

/** One open loop, with every process's pause figures over exactly its seconds. */
async function measured(
  name: string,
  rate: number,
  call: (i: number) => Promise<boolean>,
): Promise<Measured> {
  const services = processes().filter(
    (p): p is ProcessRef & { pid: number } =>
      (SERVICES as readonly string[]).includes(p.name) && p.pid !== undefined,
  );
  await collect(services);
  self.take();
  const run = await openLoop(name, rate, SECONDS, 1e6, call, processes, 0);
  const stats = { ...(await collect(services)), 'load-client': self.take() };
  return { run, stats };
}

/** Signals each service for its LOOPSTATS line and reads it from the end of its log. */
async function collect(
  services: Array<{ name: string; pid: number }>,
): Promise<Record<string, LoopStatsWindow>> {
  const logs = new Map(services.map((p) => [p.name, logOf(p.name).length]));
  for (const p of services) process.kill(p.pid, 'SIGUSR2');
  const out: Record<string, LoopStatsWindow> = {};
  for (let i = 0; i < 50 && Object.keys(out).length < services.length; i++) {
    await sleep(20);
    for (const p of services) {
      const m = /LOOPSTATS (.*)/.exec(logOf(p.name).slice(logs.get(p.name)));
      if (m) out[p.name] = JSON.parse(m[1]!) as LoopStatsWindow;
    }
  }
  return out;
}

function logOf(name: string): string {
  return name === 'gateway' ? stack.gateways[0]!.logs() : stack.service(name).logs();
}

function summarize(all: Row[]): void {
  console.log(
    '\nmedians over rounds (per-process figures: the run through the gateway; MB per 1,000 requests)',
  );
  for (const op of OPS)
    for (const v of variants) {
      const rows = all.filter((r) => r.op === op && r.variant === v.name);
      if (rows.length === 0) continue;
      const p99 = rows.map((r) => r.gateway.run.p99 - r.direct.run.p99);
      const p50 = rows.map((r) => r.gateway.run.p50 - r.direct.run.p50);
      console.log(
        `${op} ${v.name}: overhead p99 ${p99.map(sign).join(', ')} (median ${sign(median(p99))}), p50 median ${sign(median(p50))} ms; gateway p99 ${rows.map((r) => r.gateway.run.p99).join(', ')}, direct p99 ${rows.map((r) => r.direct.run.p99).join(', ')}`,
      );
      for (const name of [...SERVICES, 'load-client']) {
        const s = rows.map((r) => r.gateway.stats[name]).filter((x): x is LoopStatsWindow => !!x);
        if (s.length === 0) continue;
        const req = median(rows.map((r) => r.gateway.run.requests)) / 1000;
        const m = (f: (x: LoopStatsWindow) => number) => median(s.map(f)).toFixed(2);
        const peak = median(rows.map((r) => r.gateway.run.peakRssMb[name] ?? 0));
        console.log(
          `  ${name.padEnd(11)} loop delay p99 ${m((x) => x.loopDelayP99Ms)} max ${m((x) => x.loopDelayMaxMs)} ms; GC: ${m((x) => x.scavenges)} scavenges + ${m((x) => x.fullGcs)} full, paused ${m((x) => x.gcPauseMs / (10 * SECONDS))} % of the run (scavenges ${m((x) => x.scavengePauseMs / (10 * SECONDS))} %), longest ${m((x) => x.maxGcPauseMs)} ms; allocated ${m((x) => x.allocatedMb / req)}, promoted ${m((x) => x.promotedMb / req)} MB per 1,000 requests; CPU ${median(rows.map((r) => r.gateway.run.cpuMsPerRequest[name] ?? 0)).toFixed(3)} ms/request; peak RSS ${peak.toFixed(0)} MB`,
        );
      }
    }
}

function sign(x: number): string {
  return `${x >= 0 ? '+' : ''}${x.toFixed(2)}`;
}
