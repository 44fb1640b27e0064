// A focused experiment on a created ticket's whole cost: MariaDB, Redis, NATS, the gateway and
// every service (tickets, knowledge, answers' triage, digest) running, autocannon POST /tickets
// with an Idempotency-Key for SECONDS; then the time until the pipeline has caught up (every
// created event relayed, triaged and aggregated: both durable consumers at 0 pending). CPU per
// ticket of every process is taken over the create run and over the run plus that tail (the
// work a ticket causes, wherever it lands in time).
//   npx tsx bench/pipeline-path.ts [seconds=10] [connections=32] [rounds=2]
// TEXTS=mixed: half the tickets paraphrase a KB question, half do not (bench/drain-path.ts's
// mix); default: one fixed text, as bench/run.ts creates.
// VARIANTS='A=K=V,K2=V2;B=K=V' alternates service settings between rounds (answers, digest,
// tickets and the gateway are restarted with each variant's environment before its round).
// Knobs shared by the experiments: bench/lib/experiment.ts.
import type autocannon from 'autocannon';
import { randomUUID } from 'node:crypto';
import { loadavg } from 'node:os';
import { startExperiment } from './lib/experiment.js';
import { createThroughPipeline, describePipeline } from './lib/pipeline.js';
import { ticketTexts } from './lib/seed.js';
import { entry, queryFor } from './synthetic-kb.js';

const SECONDS = Number(process.argv[2] ?? 10);
const CONNECTIONS = Number(process.argv[3] ?? 32);
const ROUNDS = Number(process.argv[4] ?? 2);
const KB_ENTRIES = 1000;
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
      await stack.restartGateway(0, variant.env);
      console.log(`round ${round}: variant ${variant.name} ${JSON.stringify(variant.env)}`);
    }
    const { run, pipeline } = await createThroughPipeline(
      backends.nats.url,
      backends.mysql.url,
      `create, whole pipeline, round ${round}${variant ? ` (${variant.name})` : ''}`,
      opts,
      { seconds: SECONDS, connections: CONNECTIONS, maxRequests: 200_000, warmupSeconds: 5 },
      processes,
    );
    const label = variant?.name ?? 'all';
    (totals[label] ??= []).push(pipeline.totalCpuMs);
    console.log(
      `  ${describePipeline(pipeline)}; load ${loadavg()
        .map((l) => l.toFixed(1))
        .join(' ')}`,
    );
    console.log(`  peak RSS MB: ${JSON.stringify(run.peakRssMb)}`);
  }
  for (const [label, values] of Object.entries(totals))
    console.log(`total CPU ms/ticket, ${label}: ${values.map((v) => v.toFixed(2)).join(', ')}`);
} finally {
  await stop();
}
