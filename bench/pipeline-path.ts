// A focused experiment on a created ticket's whole cost: MariaDB, Redis, NATS, the gateway and
// every service (tickets, knowledge, answers' triage, digest) running, autocannon POST /tickets
// with an Idempotency-Key for SECONDS; then the time until the pipeline has caught up (every
// created event relayed, triaged and aggregated: both durable consumers at 0 pending). CPU per
// ticket of every process is taken over the create run and over the run plus that tail (the
// work a ticket causes, wherever it lands in time).
//   npx tsx bench/pipeline-path.ts [seconds=10] [connections=32] [rounds=2]
// TEXTS=mixed: half the tickets paraphrase a KB question, half do not (bench/drain-path.ts's
// mix); default: one fixed text, as bench/run.ts creates.
// VARIANTS='A=K=V,K2=V2;B=K=V' alternates service settings between rounds (answers, digest and
// tickets are restarted with each variant's environment before its round).
// Knobs shared by the experiments: bench/lib/experiment.ts.
import type autocannon from 'autocannon';
import { randomUUID } from 'node:crypto';
import { loadavg } from 'node:os';
import { connect, type JetStreamManager } from 'nats';
import { startExperiment } from './lib/experiment.js';
import { autocannonRun, CpuMeter } from './lib/measure.js';
import { ticketTexts } from './lib/seed.js';
import { entry, queryFor } from './synthetic-kb.js';

const SECONDS = Number(process.argv[2] ?? 10);
const CONNECTIONS = Number(process.argv[3] ?? 32);
const ROUNDS = Number(process.argv[4] ?? 2);
const KB_ENTRIES = 1000;
const DURABLES = ['answers-triage', 'digest-aggregator'];
const RESTARTED = ['tickets', 'answers', 'digest'];
const FIXED_TEXT = 'My export to CSV fails with a timeout after 30 seconds.';

const variants = (process.env.VARIANTS ?? '')
  .split(';')
  .filter(Boolean)
  .map((v) => {
    const name = v.slice(0, v.indexOf('='));
    const env = Object.fromEntries(
      v
        .slice(v.indexOf('=') + 1)
        .split(',')
        .filter(Boolean)
        .map((kv) => [kv.slice(0, kv.indexOf('=')), kv.slice(kv.indexOf('=') + 1)]),
    );
    return { name, env };
  });

const { stack, backends, key, processes, stop } = await startExperiment(
  'pipeline-path',
  ['tickets', 'knowledge', 'answers', 'digest'],
  'warn',
);
const nc = await connect({ servers: backends.nats.url });
try {
  const entries = Array.from({ length: KB_ENTRIES }, (_, i) => entry(i));
  await stack.admin('POST', '/admin/v1/orgs/bench/kb/entries', entries);
  const others = ticketTexts(5000);
  const texts =
    process.env.TEXTS === 'mixed'
      ? Array.from({ length: 5000 }, (_, i) =>
          i % 2 === 0 ? queryFor(entries[(i * 7919) % KB_ENTRIES]!.question) : others[i]!,
        )
      : [FIXED_TEXT];
  const jsm = await nc.jetstreamManager();
  let t = 0;
  const opts: autocannon.Options = {
    url: `${stack.baseUrl()}/api/v1/agent/tickets`,
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    requests: [
      {
        setupRequest: (req: autocannon.Request) => ({
          ...req,
          headers: { ...req.headers, 'idempotency-key': randomUUID() },
          body: JSON.stringify({ content: texts[t++ % texts.length] }),
        }),
      },
    ],
  };
  const totals: Record<string, number[]> = {};
  for (let round = 1; round <= ROUNDS; round++) {
    const variant = variants.length > 0 ? variants[(round - 1) % variants.length] : undefined;
    if (variant) {
      for (const n of RESTARTED) {
        await stack.service(n).stop();
        stack.service(n).start(variant.env);
      }
      await Promise.all(RESTARTED.map((n) => stack.waitForService(n)));
      console.log(`round ${round}: variant ${variant.name} ${JSON.stringify(variant.env)}`);
    }
    // A short warm-up whose tickets are worked off before the measured run starts.
    await autocannonRun(
      'warm-up',
      opts,
      { seconds: 5, connections: CONNECTIONS, maxRequests: 200_000, warmupSeconds: 0 },
      processes,
    );
    await caughtUp(jsm, 600_000);
    const createdBefore = await subjectCount(jsm, 'tickets.created');
    const all = new CpuMeter(processes).start();
    const run = await autocannonRun(
      `create, whole pipeline, round ${round}${variant ? ` (${variant.name})` : ''}`,
      opts,
      { seconds: SECONDS, connections: CONNECTIONS, maxRequests: 200_000, warmupSeconds: 0 },
      processes,
    );
    const ended = Date.now();
    const created = (await subjectCount(jsm, 'tickets.created', createdBefore + run.requests - run.errors)) -
      createdBefore;
    await caughtUp(jsm, 600_000);
    const tail = (Date.now() - ended) / 1000;
    const perTicket = all.perRequest(run.requests);
    const total = Object.values(perTicket).reduce((a, b) => a + b, 0);
    const label = variant?.name ?? 'all';
    (totals[label] ??= []).push(total);
    console.log(
      `  ${run.requests} created (${created} events), ${run.rps}/s; caught up ${tail.toFixed(1)} s after the end; load ${loadavg()
        .map((l) => l.toFixed(1))
        .join(' ')}`,
    );
    console.log(
      `  CPU ms/ticket incl. the tail: ${Object.entries(perTicket)
        .map(([name, ms]) => `${name} ${ms}`)
        .join(', ')}; total ${total.toFixed(2)}`,
    );
    console.log(`  peak RSS MB: ${JSON.stringify(run.peakRssMb)}`);
  }
  for (const [label, values] of Object.entries(totals))
    console.log(`total CPU ms/ticket, ${label}: ${values.map((v) => v.toFixed(2)).join(', ')}`);
} finally {
  await nc.close();
  await stop();
}

async function subjectCount(jsm: JetStreamManager, subject: string, atLeast = 0): Promise<number> {
  const until = Date.now() + 60_000;
  for (;;) {
    const info = await jsm.streams.info('TICKETS', { subjects_filter: subject });
    const n = info.state.subjects?.[subject] ?? 0;
    if (n >= atLeast || Date.now() > until) return n;
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** Until every created ticket is triaged and both durable consumers have nothing pending. */
async function caughtUp(jsm: JetStreamManager, timeoutMs: number): Promise<void> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const [created, triaged] = await Promise.all([
      subjectCount(jsm, 'tickets.created'),
      subjectCount(jsm, 'tickets.triaged'),
    ]);
    let pending = 0;
    for (const name of DURABLES) {
      const info = await jsm.consumers.info('TICKETS', name).catch(() => undefined);
      pending += info ? info.num_pending + info.num_ack_pending : 1;
    }
    if (triaged >= created && pending === 0) return;
    if (Date.now() > until) throw new Error('the pipeline did not catch up');
    await new Promise((r) => setTimeout(r, 100));
  }
}
