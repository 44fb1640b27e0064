// `npm run bench`: the benchmark harness. Runs the whole stack as separate service processes
// (gateway, tickets, knowledge, answers, digest) on loopback, against real MariaDB, Redis and
// NATS (`real`) and/or with the embedded adapters (`embedded`), drives it with autocannon and
// in-process closed loops, and reports per operation requests/s, p50/p90/p99 latency, errors
// and peak RSS per process, next to the baselines (a bare Node `http` server, the same server
// with one no-op gRPC hop behind it, direct gRPC calls that bypass the gateway), the
// data-scale runs and a soak. Writes
// bench/results/<timestamp>.json and .svg. Bounded in requests and time; loopback only.
//
//   npm run bench                                   everything, both modes (≈ 40 min)
//   BENCH_MODE=real BENCH_SECONDS=3 BENCH_SCALE_ROWS=20000 BENCH_KB_SIZES=1000,10000 \
//     BENCH_DIGEST_TICKETS=5000 BENCH_SOAK_SECONDS=20 npm run bench        quick check
//
// Knobs (env): BENCH_MODE real|embedded|both (both), BENCH_SECONDS per run (10),
// BENCH_WARMUP_SECONDS (2), BENCH_CONNECTIONS throughput runs (32), BENCH_MODERATE_CONNECTIONS
// saturated latency comparisons (4), BENCH_MODERATE_FRACTION moderate-load open-loop rate as a
// fraction of the slower path's closed-loop throughput (0.25), BENCH_ROUNDS alternating rounds of each ratio pair (3),
// BENCH_MAX_REQUESTS per run (200000), BENCH_KB_ENTRIES (1000), BENCH_SEED_TICKETS (1000),
// BENCH_SCALE_ROWS (1000000), BENCH_KB_SIZES (1000,10000,100000), BENCH_DIGEST_TICKETS
// (100000), BENCH_SOAK_SECONDS (600 real, 180 embedded), BENCH_SOAK_RATE req/s (200),
// BENCH_SECTIONS (ops,list-scale,search-scale,digest-scale,soak), BENCH_LOG_LEVEL (info),
// BENCH_CPU_PROF=1 (every service runs under the V8 CPU profiler, lib/cpu-profile-preload.mjs;
// profiles land next to the report; read them with `npx tsx bench/profile-top.ts <file>`),
// BENCH_PROFILE_SEARCH (1: one more KB search run at the end of each mode with the CPU profiler
// switched on by signal in the gateway and knowledge; its summary, BENCH_PROFILE_TOP (15)
// packages and functions each, is printed and kept in the report). The targets are judged in
// lib/targets.ts.
import type autocannon from 'autocannon';
import { randomUUID } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, release, tmpdir, totalmem } from 'node:os';
import { join, resolve } from 'node:path';
import { ensureBackendPackages, startBackends, type Backends } from '../test/support/backends.js';
import { ALL_SCOPES, Stack, api } from '../test/support/stack.js';
import { BareServer, DirectGrpc, GrpcHopServer } from './lib/baselines.js';
import { renderChart, type ChartRow } from './lib/chart.js';
import { printProfiles, profileDuring, summarizeProfile } from './lib/cpu-profile.js';
import {
  RssSampler,
  autocannonRun,
  closedLoop,
  httpCaller,
  median,
  openLoop,
  waitIdle,
  type LoadSettings,
  type ProcessRef,
  type RunResult,
  UNLIMITED,
} from './lib/measure.js';
import { createThroughPipeline, describePipeline } from './lib/pipeline.js';
import { mondayOf, seedDigestWeek, seedTickets, ticketTexts } from './lib/seed.js';
import { evaluate, HOP_NAME, SEARCH_NAME, type Mode, type ModeReport } from './lib/targets.js';
import { entry, queryFor, random } from './synthetic-kb.js';

const env = (name: string, fallback: string) => process.env[name] ?? fallback;
const num = (name: string, fallback: number) => Number(env(name, String(fallback)));

const MODE = env('BENCH_MODE', 'both');
const SECONDS = num('BENCH_SECONDS', 10);
const CONNECTIONS = num('BENCH_CONNECTIONS', 32);
const MODERATE = num('BENCH_MODERATE_CONNECTIONS', 4);
const MODERATE_FRACTION = num('BENCH_MODERATE_FRACTION', 0.25);
const ROUNDS = num('BENCH_ROUNDS', 3);
const KB_ENTRIES = num('BENCH_KB_ENTRIES', 1000);
const SEED_TICKETS = num('BENCH_SEED_TICKETS', 1000);
const SCALE_ROWS = num('BENCH_SCALE_ROWS', 1_000_000);
const KB_SIZES = env('BENCH_KB_SIZES', '1000,10000,100000').split(',').map(Number);
const DIGEST_TICKETS = num('BENCH_DIGEST_TICKETS', 100_000);
const SOAK_RATE = num('BENCH_SOAK_RATE', 200);
const SECTIONS = new Set(
  env('BENCH_SECTIONS', 'ops,list-scale,search-scale,digest-scale,soak').split(','),
);
const LOG_LEVEL = env('BENCH_LOG_LEVEL', 'info');
const CPU_PROF = env('BENCH_CPU_PROF', '') === '1';
/**
 * Share of a core below which a service counts as idle. Under the CPU profiler an idle service
 * still spends 6–12 % of a core on sampling, so the usual 5 % would never be reached and every
 * wait for the pipeline would run to its timeout.
 */
const IDLE_CPU = CPU_PROF ? 0.2 : 0.05;
const PROFILE_SEARCH = env('BENCH_PROFILE_SEARCH', '1') === '1';
const PROFILE_TOP = num('BENCH_PROFILE_TOP', 15);
const LOAD: LoadSettings = {
  seconds: SECONDS,
  connections: CONNECTIONS,
  maxRequests: num('BENCH_MAX_REQUESTS', 200_000),
  warmupSeconds: num('BENCH_WARMUP_SECONDS', 2),
};
const soakSeconds = (mode: Mode) => num('BENCH_SOAK_SECONDS', mode === 'real' ? 600 : 180);

/** Rate of the open loop that measures the bare server's cost per request when nearly idle. */
const BARE_LOW_RATE = 100;

function log(message: string): void {
  console.log(
    `[${new Date().toISOString().slice(11, 19)}] ${message} (load ${loadavg()
      .map((l) => l.toFixed(2))
      .join(' ')})`,
  );
}

async function runMode(mode: Mode, profileDir: string | undefined): Promise<ModeReport> {
  const dir = mkdtempSync(join(tmpdir(), `sa-bench-${mode}-`));
  // Profilers started and stopped by signal around one search run (lib/cpu-profile-preload.mjs).
  const signalProfileDir = !profileDir && PROFILE_SEARCH ? join(dir, 'profiles') : undefined;
  let backends: Backends | undefined;
  if (mode === 'real') {
    await ensureBackendPackages();
    backends = await startBackends(join(dir, 'b'));
  }
  const stack = new Stack({
    dir,
    ...(backends
      ? {
          mysqlUrl: backends.mysql.url,
          redisUrl: backends.redis.url,
          natsUrl: backends.nats.url,
        }
      : {}),
    env: {
      LOG_LEVEL,
      // The weekly run would build the seeded week in the middle of a measurement.
      DIGEST_SCHEDULER_ENABLED: 'false',
      ...(profileDir
        ? {
            NODE_OPTIONS: `--import=${resolve('bench/lib/cpu-profile-preload.mjs')}`,
            BENCH_PROFILE_DIR: join(profileDir, mode),
          }
        : {}),
      ...(signalProfileDir
        ? {
            NODE_OPTIONS: `--import=${resolve('bench/lib/cpu-profile-preload.mjs')}`,
            BENCH_PROFILE_DIR: signalProfileDir,
            BENCH_PROFILE_ON_SIGNAL: '1',
          }
        : {}),
    },
  });
  const report: ModeReport = {
    mode,
    runs: [],
    searchResponseBytes: 0,
    setup: {},
    peakServiceRssMb: {},
    targets: [],
  };
  let bare: BareServer | undefined;
  let hop: GrpcHopServer | undefined;
  const grpc = () =>
    new DirectGrpc({
      knowledge: stack.addresses.KNOWLEDGE_ADDR!,
      tickets: stack.addresses.TICKETS_ADDR!,
      digest: stack.addresses.DIGEST_ADDR!,
    });
  let direct: DirectGrpc | undefined;
  /** Set by the ops section: the profiled search run, done at the end of the mode. */
  let profileSearch = async (): Promise<void> => undefined;
  const services = (): ProcessRef[] => [
    ...stack.gateways.map((g) => ({ name: g.name.replace(/-0$/, ''), pid: g.pid })),
    ...[...stack.upstreams.values()].map((p) => ({ name: p.name, pid: p.pid })),
  ];
  const processes = (): ProcessRef[] => [
    ...services(),
    ...(bare?.processRefs() ?? []),
    ...(hop?.processRefs() ?? []),
    // autocannon and the closed loops: they share the two cores too.
    { name: 'load-client', pid: process.pid },
    ...(backends
      ? [
          { name: 'mariadb', pid: backends.mysql.pid },
          { name: 'redis', pid: backends.redis.pid },
          { name: 'nats', pid: backends.nats.pid },
        ]
      : []),
  ];
  const record = (r: RunResult) => {
    report.runs.push(r);
    for (const [name, mb] of Object.entries(r.peakRssMb)) {
      if (services().some((s) => s.name === name))
        report.peakServiceRssMb[name] = Math.max(report.peakServiceRssMb[name] ?? 0, mb);
    }
    return r;
  };
  const settle = async (what: string) => {
    const s = await waitIdle(services(), 300_000, IDLE_CPU);
    log(`${what}: pipeline idle after ${s.toFixed(0)} s`);
  };

  try {
    log(`${mode}: starting ${backends ? 'MariaDB, Redis, NATS and ' : ''}the services`);
    await stack.start();
    direct = grpc();
    const base = stack.baseUrl();
    const key = await stack.orgWithKey('bench', ALL_SCOPES, UNLIMITED);
    const auth = { authorization: `Bearer ${key}` };
    const jsonHeaders = { ...auth, 'content-type': 'application/json' };

    // Setup: a KB of KB_ENTRIES, SEED_TICKETS tickets through the API, the week's digest.
    let t0 = Date.now();
    const entries = Array.from({ length: KB_ENTRIES }, (_, i) => entry(i));
    for (let i = 0; i < entries.length; i += 1000) {
      await stack.admin('POST', '/admin/v1/orgs/bench/kb/entries', entries.slice(i, i + 1000));
    }
    report.setup.kbImportSeconds = (Date.now() - t0) / 1000;
    const queries = Array.from({ length: 500 }, () =>
      queryFor(entries[Math.floor(random() * entries.length)]!.question),
    );
    const texts = ticketTexts(Math.max(SEED_TICKETS, 1000));
    t0 = Date.now();
    const creator = httpCaller(base, 16);
    await closedLoop(
      'setup: create tickets',
      16,
      3600,
      SEED_TICKETS,
      (i) =>
        creator.request(
          'POST',
          '/api/v1/agent/tickets',
          { ...jsonHeaders, 'idempotency-key': randomUUID() },
          JSON.stringify({ content: texts[i % texts.length] }),
        ),
      () => [],
      0,
    );
    creator.close();
    report.setup.seedTicketsSeconds = (Date.now() - t0) / 1000;
    await settle('seed tickets');
    t0 = Date.now();
    const built = await stack.admin<{ ticket_count: number }>(
      'POST',
      '/admin/v1/orgs/bench/digests',
      { week_start: mondayOf(new Date()) },
    );
    report.setup.digestBuildSeconds = (Date.now() - t0) / 1000;
    report.setup.digestTickets = built.ticket_count;
    log(
      `setup: ${KB_ENTRIES} KB entries in ${report.setup.kbImportSeconds} s, ${SEED_TICKETS} tickets, digest of ${built.ticket_count} tickets in ${report.setup.digestBuildSeconds} s`,
    );

    const sample = await api(
      base,
      'GET',
      `/api/v1/agent/kb/search?limit=5&query=${encodeURIComponent(queries[0]!)}`,
      { key },
    );
    if (sample.status !== 200) throw new Error(`search failed: ${sample.status} ${sample.text}`);
    report.searchResponseBytes = Buffer.byteLength(sample.text);

    if (SECTIONS.has('ops')) {
      bare = await BareServer.start(sample.text);
      hop = await GrpcHopServer.start(sample.text);
      let q = 0;
      const searchPath = () =>
        `/api/v1/agent/kb/search?limit=5&query=${encodeURIComponent(queries[q++ % queries.length]!)}`;
      const searchOpts: autocannon.Options = {
        url: base,
        headers: auth,
        requests: [{ setupRequest: (req: autocannon.Request) => ({ ...req, path: searchPath() }) }],
      };
      const client = httpCaller(base, Math.max(MODERATE, 1));
      const d = direct;

      console.log(
        `\n${mode}: throughput, ${CONNECTIONS} connections (${ROUNDS} alternating rounds)`,
      );
      for (let round = 1; round <= ROUNDS; round++) {
        record(
          await autocannonRun(
            `bare node http (${report.searchResponseBytes} B)`,
            { url: bare.url },
            LOAD,
            processes,
          ),
        );
        record(await autocannonRun(HOP_NAME, { url: hop.url }, LOAD, processes));
        record(await autocannonRun(SEARCH_NAME, searchOpts, LOAD, processes));
      }
      profileSearch = async () => {
        if (!signalProfileDir) return;
        // Where the time goes: one more search run (not judged), with the V8 CPU profiler on in
        // the gateway and knowledge. Last in the mode: the profiler's own memory and CPU show
        // in no other run (peak RSS included).
        const profiled = services().filter((p) => p.name === 'gateway' || p.name === 'knowledge');
        console.log(`\n${mode}: KB search again, with the CPU profiler on`);
        const { result, profiles } = await profileDuring(signalProfileDir, profiled, () =>
          // No warm-up (the runs before were one): the profile covers the measured requests only.
          autocannonRun(
            `${SEARCH_NAME} (CPU profiler on)`,
            searchOpts,
            { ...LOAD, warmupSeconds: 0 },
            processes,
          ),
        );
        report.runs.push(result);
        report.searchProfile = {
          run: result,
          processes: Object.fromEntries(
            [...profiles].map(([name, p]) => [
              name,
              summarizeProfile(p, result.requests, PROFILE_TOP),
            ]),
          ),
        };
        printProfiles(`${mode}: where a search's CPU goes`, report.searchProfile.processes);
      };
      await hop.stop();
      hop = undefined;
      // What one request costs the bare server when requests come one at a time (an open loop
      // at a low rate) rather than back to back: on a VM every wake-up of an idle process
      // costs CPU and latency of its own, and each process a request crosses adds wake-ups.
      const bareClient = httpCaller(bare.url, 16);
      record(
        await openLoop(
          `bare node http (${BARE_LOW_RATE} req/s)`,
          BARE_LOW_RATE,
          SECONDS,
          LOAD.maxRequests,
          () => bareClient.request('GET', '/', {}),
          processes,
        ),
      );
      bareClient.close();
      await bare.stop();
      bare = undefined;

      // Gateway overhead. First saturated: closed loops of MODERATE with no think time keep
      // both cores busy, so latency there is mostly queueing (kept as a reference). Then at
      // moderate load, the targets' condition: open loops at MODERATE_FRACTION of what the
      // slower path (through the gateway) sustained saturated, the same rate for the direct
      // call and through the gateway.
      const overheadPairs = [
        {
          op: 'search',
          direct: async (i: number) => {
            await d.search('bench', queries[i % queries.length]!);
            return true;
          },
          gateway: (c: typeof client, i: number) =>
            c.request(
              'GET',
              `/api/v1/agent/kb/search?limit=5&query=${encodeURIComponent(queries[i % queries.length]!)}`,
              auth,
            ),
        },
        {
          op: 'list',
          direct: async () => {
            await d.listTickets('bench', 20);
            return true;
          },
          gateway: (c: typeof client) => c.request('GET', '/api/v1/agent/tickets?limit=20', auth),
        },
      ] as const;
      const directName = {
        search: 'grpc direct: knowledge Search',
        list: 'grpc direct: tickets ListTickets',
      };
      console.log(
        `\n${mode}: gateway overhead, saturated: closed loops of ${MODERATE} (${ROUNDS} rounds)`,
      );
      const capacity: Record<string, number[]> = { search: [], list: [] };
      for (let round = 1; round <= ROUNDS; round++) {
        for (const pair of overheadPairs) {
          const direct = record(
            await closedLoop(
              directName[pair.op],
              MODERATE,
              SECONDS,
              LOAD.maxRequests,
              pair.direct,
              processes,
            ),
          );
          const viaGateway = record(
            await closedLoop(
              `${pair.op} via gateway (loop)`,
              MODERATE,
              SECONDS,
              LOAD.maxRequests,
              (i) => pair.gateway(client, i),
              processes,
            ),
          );
          // The slower path's saturated throughput: "moderate" must be moderate for both.
          capacity[pair.op]!.push(Math.min(direct.rps, viaGateway.rps));
        }
      }
      const openClient = httpCaller(base, 256);
      for (const pair of overheadPairs) {
        const rate = Math.max(10, Math.round(median(capacity[pair.op]!) * MODERATE_FRACTION));
        console.log(
          `\n${mode}: gateway overhead, ${pair.op} at moderate load: open loops at ${rate} req/s (${MODERATE_FRACTION} × the slower path's saturated throughput, ${ROUNDS} rounds)`,
        );
        for (let round = 1; round <= ROUNDS; round++) {
          record(
            await openLoop(
              `${directName[pair.op]} (moderate)`,
              rate,
              SECONDS,
              LOAD.maxRequests,
              pair.direct,
              processes,
            ),
          );
          record(
            await openLoop(
              `${pair.op} via gateway (moderate)`,
              rate,
              SECONDS,
              LOAD.maxRequests,
              (i) => pair.gateway(openClient, i),
              processes,
            ),
          );
        }
      }
      openClient.close();

      console.log(`\n${mode}: direct gRPC throughput, ${CONNECTIONS} concurrent`);
      record(
        await closedLoop(
          'grpc direct: knowledge Search',
          CONNECTIONS,
          SECONDS,
          LOAD.maxRequests,
          async (i) => {
            await d.search('bench', queries[i % queries.length]!);
            return true;
          },
          processes,
        ),
      );
      record(
        await closedLoop(
          'grpc direct: tickets ListTickets',
          CONNECTIONS,
          SECONDS,
          LOAD.maxRequests,
          async () => {
            await d.listTickets('bench', 20);
            return true;
          },
          processes,
        ),
      );
      client.close();

      console.log(`\n${mode}: operations through the gateway, ${CONNECTIONS} connections`);
      record(
        await autocannonRun(
          'faq via gateway',
          { url: `${base}/api/v1/agent/faq`, headers: auth },
          LOAD,
          processes,
        ),
      );
      record(
        await autocannonRun(
          'list via gateway',
          { url: `${base}/api/v1/agent/tickets?limit=20`, headers: auth },
          LOAD,
          processes,
        ),
      );
      let a = 0;
      record(
        await autocannonRun(
          'answer via gateway',
          {
            url: `${base}/api/v1/agent/answers`,
            method: 'POST',
            headers: jsonHeaders,
            requests: [
              {
                setupRequest: (req: autocannon.Request) => ({
                  ...req,
                  body: JSON.stringify({ question: queries[a++ % queries.length] }),
                }),
              },
            ],
          },
          LOAD,
          processes,
        ),
      );
      // Last: every created ticket is triaged and aggregated afterwards.
      const createOpts: autocannon.Options = {
        url: `${base}/api/v1/agent/tickets`,
        method: 'POST',
        headers: jsonHeaders,
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
      };
      if (backends) {
        const measured = await createThroughPipeline(
          backends.nats.url,
          backends.mysql.url,
          'create via gateway (idempotency key)',
          createOpts,
          LOAD,
          processes,
        );
        record(measured.run);
        report.pipeline = measured.pipeline;
        log(`whole pipeline: ${describePipeline(measured.pipeline)}`);
      } else {
        record(
          await autocannonRun('create via gateway (idempotency key)', createOpts, LOAD, processes),
        );
        await settle('creates');
      }
      // The create path alone: the event consumers (answers' triage, digest) are stopped, so
      // they do not compete for the same two cores; the relay still publishes every event.
      // Restarted, they work off the backlog: that is the pipeline's own throughput.
      const consumers = ['answers', 'digest'].filter((n) => stack.upstreams.has(n));
      await Promise.all(consumers.map((n) => stack.service(n).stop()));
      const alone = record(
        await autocannonRun(
          'create via gateway, consumers stopped',
          createOpts,
          { ...LOAD, warmupSeconds: 0 },
          processes,
        ),
      );
      const drainStart = Date.now();
      for (const n of consumers) stack.service(n).start();
      await Promise.all(consumers.map((n) => stack.waitForService(n)));
      await waitIdle(services(), 600_000, IDLE_CPU);
      const drainSeconds = (Date.now() - drainStart) / 1000;
      report.setup.pipelineBacklog = alone.requests;
      report.setup.pipelineDrainSeconds = drainSeconds;
      log(
        `triage + digest pipeline worked off ${alone.requests} tickets in ${drainSeconds.toFixed(0)} s (${(alone.requests / drainSeconds).toFixed(0)} tickets/s)`,
      );
    }

    if (SECTIONS.has('list-scale') && backends) {
      console.log(`\n${mode}: list tickets at 1000 vs ${SCALE_ROWS} tickets in one organization`);
      const scale: Record<string, { key: string; deep?: string }> = {};
      for (const [org, rows] of [
        ['scale-small', 1_000],
        ['scale-big', SCALE_ROWS],
      ] as const) {
        const t = Date.now();
        const orgKey = await stack.orgWithKey(org, ['tickets:read'], UNLIMITED);
        await seedTickets(backends.mysql.url, org, rows);
        log(`seeded ${rows} tickets in ${((Date.now() - t) / 1000).toFixed(1)} s`);
        // A cursor some pages deep: deep pages must cost what the first one does.
        let cursor: string | undefined;
        for (let i = 0; i < Math.min(25, Math.floor(rows / 40)); i++) {
          const q = cursor ? `&cursor=${encodeURIComponent(cursor)}` : '';
          cursor = (await api(base, 'GET', `/api/v1/agent/tickets?limit=20${q}`, { key: orgKey }))
            .json.next_cursor;
        }
        scale[org] = { key: orgKey, ...(cursor ? { deep: cursor } : {}) };
      }
      await settle('seeding');
      const client = httpCaller(base, MODERATE);
      const listLoop = (name: string, org: string, query: string) =>
        closedLoop(
          name,
          MODERATE,
          SECONDS,
          LOAD.maxRequests,
          () =>
            client.request('GET', `/api/v1/agent/tickets?limit=20${query}`, {
              authorization: `Bearer ${scale[org]!.key}`,
            }),
          processes,
        );
      const small: number[] = [];
      const big: number[] = [];
      for (let round = 1; round <= ROUNDS; round++) {
        small.push(record(await listLoop('list first page @ 1000', 'scale-small', '')).p99);
        big.push(record(await listLoop(`list first page @ ${SCALE_ROWS}`, 'scale-big', '')).p99);
      }
      for (const org of ['scale-small', 'scale-big']) {
        const rows = org === 'scale-small' ? 1000 : SCALE_ROWS;
        record(await listLoop(`list status=open @ ${rows}`, org, '&status=open'));
        const deep = scale[org]!.deep;
        if (deep)
          record(
            await listLoop(`list deep page @ ${rows}`, org, `&cursor=${encodeURIComponent(deep)}`),
          );
      }
      client.close();
      report.listScale = {
        rows: SCALE_ROWS,
        p99Small: median(small),
        p99Big: median(big),
        ratio: Math.round((median(big) / median(small)) * 100) / 100,
      };
      log(
        `list p99 ${SCALE_ROWS} vs 1000 tickets: ${report.listScale.ratio} (medians of ${ROUNDS} rounds)`,
      );
    }

    if (SECTIONS.has('search-scale')) {
      console.log(
        `\n${mode}: KB search at ${KB_SIZES.join(', ')} entries (1 connection: latency without queueing)`,
      );
      report.searchScale = [];
      const client = httpCaller(base, 1);
      for (const size of KB_SIZES) {
        const org = `search-${size}`;
        const orgKey = await stack.orgWithKey(org, ['kb:read'], UNLIMITED);
        const all = Array.from({ length: size }, (_, i) => entry(i));
        const t = Date.now();
        const sampler = new RssSampler(processes).start();
        for (let i = 0; i < all.length; i += 1000) {
          const res = await stack.admin<{ failed: unknown[] }>(
            'POST',
            `/admin/v1/orgs/${org}/kb/entries`,
            all.slice(i, i + 1000),
          );
          if (res.failed.length > 0)
            throw new Error(`import failed: ${JSON.stringify(res.failed[0])}`);
        }
        const importRss = sampler.stop();
        for (const [name, mb] of Object.entries(importRss))
          if (services().some((s) => s.name === name))
            report.peakServiceRssMb[name] = Math.max(report.peakServiceRssMb[name] ?? 0, mb);
        const importSeconds = (Date.now() - t) / 1000;
        const qs = Array.from({ length: 500 }, () =>
          queryFor(all[Math.floor(random() * all.length)]!.question),
        );
        log(
          `imported ${size} entries in ${importSeconds.toFixed(1)} s (knowledge peak RSS ${importRss.knowledge} MB)`,
        );
        // Let the import's garbage collection finish before timing searches.
        await settle('import');
        const gateway = record(
          await closedLoop(
            `search @ ${size} via gateway`,
            1,
            SECONDS,
            LOAD.maxRequests,
            (i) =>
              client.request(
                'GET',
                `/api/v1/agent/kb/search?limit=5&query=${encodeURIComponent(qs[i % qs.length]!)}`,
                {
                  authorization: `Bearer ${orgKey}`,
                },
              ),
            processes,
          ),
        );
        const d = direct;
        const viaGrpc = record(
          await closedLoop(
            `search @ ${size} grpc direct`,
            1,
            SECONDS,
            LOAD.maxRequests,
            async (i) => {
              await d.search(org, qs[i % qs.length]!);
              return true;
            },
            processes,
          ),
        );
        report.searchScale.push({
          entries: size,
          importSeconds,
          gateway,
          direct: viaGrpc,
          knowledgeRssMb: Math.max(gateway.peakRssMb.knowledge ?? 0, importRss.knowledge ?? 0),
        });
      }
      client.close();
    }

    if (SECTIONS.has('digest-scale') && backends) {
      console.log(`\n${mode}: digest build for a week of ${DIGEST_TICKETS} tickets`);
      const org = 'digest-scale';
      await stack.orgWithKey(org, ['faq:read'], UNLIMITED);
      const lastWeek = mondayOf(new Date(Date.now() - 7 * 86_400_000));
      const t = Date.now();
      await seedDigestWeek(backends.mysql.url, org, lastWeek, DIGEST_TICKETS);
      log(`seeded ${DIGEST_TICKETS} digest tickets in ${((Date.now() - t) / 1000).toFixed(1)} s`);
      const times: number[] = [];
      let built: Awaited<ReturnType<DirectGrpc['buildDigest']>> | undefined;
      const sampler = new RssSampler(processes).start();
      for (let i = 0; i < 3; i++) {
        const b = performance.now();
        built = await direct.buildDigest(org, lastWeek);
        times.push(Math.round(performance.now() - b) / 1000);
      }
      const rss = sampler.stop();
      for (const [name, mb] of Object.entries(rss))
        if (services().some((s) => s.name === name))
          report.peakServiceRssMb[name] = Math.max(report.peakServiceRssMb[name] ?? 0, mb);
      const content = built?.digest?.content ?? '';
      report.digestScale = {
        tickets: built?.digest?.ticketCount ?? 0,
        buildSeconds: times,
        topics: (content.match(/^#{2,3} /gm) ?? []).length,
        contentBytes: Buffer.byteLength(content),
      };
      log(
        `BuildDigest over ${report.digestScale.tickets} tickets: ${times.join(' s, ')} s (digest peak RSS ${rss.digest} MB)`,
      );
    }

    if (SECTIONS.has('soak') && soakSeconds(mode) > 0) {
      const seconds = soakSeconds(mode);
      console.log(`\n${mode}: soak, mixed operations at ${SOAK_RATE} req/s for ${seconds} s`);
      await settle('before soak');
      let s = 0;
      let c = 0;
      const search = {
        setupRequest: (req: autocannon.Request) => ({
          ...req,
          method: 'GET' as const,
          path: `/api/v1/agent/kb/search?limit=5&query=${encodeURIComponent(queries[s++ % queries.length]!)}`,
        }),
      };
      const get = (path: string) => ({ method: 'GET' as const, path });
      const sampler = new RssSampler(services, 250, true).start();
      const run = record(
        await autocannonRun(
          'soak: mixed operations',
          {
            url: base,
            headers: jsonHeaders,
            overallRate: SOAK_RATE,
            connections: 16,
            requests: [
              search,
              get('/api/v1/agent/tickets?limit=20'),
              search,
              get('/api/v1/agent/faq'),
              search,
              {
                method: 'POST',
                path: '/api/v1/agent/tickets',
                setupRequest: (req: autocannon.Request) => ({
                  ...req,
                  headers: { ...req.headers, 'idempotency-key': randomUUID() },
                  body: JSON.stringify({ content: texts[c++ % texts.length] }),
                }),
              },
              search,
              get('/api/v1/agent/tickets?limit=20&status=open'),
              {
                method: 'POST',
                path: '/api/v1/agent/answers',
                setupRequest: (req: autocannon.Request) => ({
                  ...req,
                  body: JSON.stringify({ question: queries[s++ % queries.length] }),
                }),
              },
              search,
            ],
          },
          {
            ...LOAD,
            seconds,
            warmupSeconds: 0,
            maxRequests: Math.max(LOAD.maxRequests, SOAK_RATE * seconds * 2),
          },
          processes,
        ),
      );
      sampler.stop();
      const rss: Record<string, { earlyMb: number; endMb: number; growth: number }> = {};
      for (const [name, series] of sampler.series) {
        // Early = median of 20–30 % of the run (past the heaps' warm-up growth), end = median
        // of the last 10 %.
        const window = (from: number, to: number) =>
          median(
            series.filter(([t]) => t >= from * seconds && t <= to * seconds).map(([, mb]) => mb),
          );
        const earlyMb = window(0.2, 0.3);
        const endMb = window(0.9, 1.01);
        rss[name] = {
          earlyMb: Math.round(earlyMb * 10) / 10,
          endMb: Math.round(endMb * 10) / 10,
          growth: Math.round((endMb / earlyMb - 1) * 1000) / 1000,
        };
      }
      report.soak = { seconds, rate: SOAK_RATE, run, rss };
      for (const [name, r] of Object.entries(rss))
        console.log(
          `  RSS ${name.padEnd(10)} ${r.earlyMb} MB → ${r.endMb} MB (${(r.growth * 100).toFixed(1)} %)`,
        );
    }

    await profileSearch();
    report.targets = evaluate(report);
    return report;
  } finally {
    direct?.close();
    await bare?.stop();
    await hop?.stop();
    await stack.stop();
    await backends?.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

async function main(): Promise<void> {
  const modes: Mode[] = MODE === 'both' ? ['real', 'embedded'] : [MODE as Mode];
  if (!modes.every((m) => m === 'real' || m === 'embedded'))
    throw new Error(`BENCH_MODE must be real, embedded or both, not ${MODE}`);
  const stamp = new Date().toISOString().replace(/[:.]/g, '-');
  const resultsDir = resolve('bench/results');
  mkdirSync(resultsDir, { recursive: true });
  const profileDir = CPU_PROF ? join(resultsDir, `profiles-${stamp}`) : undefined;
  const machine = {
    cores: cpus().length,
    cpu: cpus()[0]?.model ?? 'unknown',
    memoryGiB: Math.round((totalmem() / 2 ** 30) * 10) / 10,
    kernel: release(),
    node: process.version,
  };
  const loadStart = loadavg();
  log(
    `bench: ${machine.cores} cores (${machine.cpu}), ${machine.memoryGiB} GiB, node ${machine.node}; modes ${modes.join(', ')}; ${SECONDS} s per run, ${CONNECTIONS} connections; logs at ${LOG_LEVEL}`,
  );
  const reports: ModeReport[] = [];
  for (const mode of modes) reports.push(await runMode(mode, profileDir));
  const targets = reports.flatMap((r) => r.targets);

  console.log('\ntargets (ratios measured in this run):');
  for (const t of targets) {
    console.log(
      `  ${t.pass === null ? 'INFO' : t.pass ? 'PASS' : 'FAIL'}  [${t.mode}] ${t.target}: ${t.goal}; measured ${t.measured}`,
    );
  }
  const out = join(resultsDir, `${stamp}.json`);
  const command = `${Object.entries(process.env)
    .filter(([k]) => k.startsWith('BENCH_'))
    .map(([k, v]) => `${k}=${v}`)
    .join(' ')} npm run bench`.trim();
  writeFileSync(
    out,
    JSON.stringify(
      {
        startedAt: stamp,
        command,
        machine,
        loadavg: { start: loadStart, end: loadavg() },
        settings: {
          seconds: SECONDS,
          connections: CONNECTIONS,
          moderateConnections: MODERATE,
          rounds: ROUNDS,
          kbEntries: KB_ENTRIES,
          seedTickets: SEED_TICKETS,
          scaleRows: SCALE_ROWS,
          kbSizes: KB_SIZES,
          digestTickets: DIGEST_TICKETS,
          soakRate: SOAK_RATE,
          logLevel: LOG_LEVEL,
          sections: [...SECTIONS],
        },
        targets,
        modes: reports,
      },
      null,
      2,
    ),
  );
  const rows: ChartRow[] = reports.flatMap((r) => {
    const names = [
      ...new Set(
        r.runs.filter((x) => !x.name.startsWith('soak')).map((x) => `${x.name}|${x.connections}`),
      ),
    ];
    return names.map((id) => {
      const [name, conns] = id.split('|');
      const same = r.runs.filter((x) => x.name === name && String(x.connections) === conns);
      return {
        label: `${r.mode}: ${name} (${conns}c)`,
        rps: median(same.map((x) => x.rps)),
        p50: median(same.map((x) => x.p50)),
        p99: median(same.map((x) => x.p99)),
      };
    });
  });
  writeFileSync(
    out.replace(/\.json$/, '.svg'),
    renderChart(
      `Support Agent API benchmark ${stamp}`,
      `${machine.cores} cores ${machine.cpu}, load ${loadStart.map((l) => l.toFixed(2)).join(' ')}; medians over rounds`,
      rows,
    ),
  );
  log(`report: ${out} (+ .svg)${profileDir ? `; CPU profiles in ${profileDir}` : ''}`);
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
