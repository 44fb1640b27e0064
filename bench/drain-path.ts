// A focused experiment on the event pipeline: MariaDB, Redis, NATS and the services tickets,
// knowledge, answers and digest. The consumers (answers' triage, digest) are stopped while
// TICKETS tickets are created through the gateway, then started again: the time until both
// durable consumers have worked the backlog off is the pipeline's drain rate.
// Prints tickets/s drained and CPU ms per ticket of every process.
//   npx tsx bench/drain-path.ts [tickets=5000] [rounds=2]
// SERVICE_ENV='TRIAGE_CONCURRENCY=8 DIGEST_CONSUMER_CONCURRENCY=4' passes settings to the services;
// the other knobs shared by the experiments: bench/lib/experiment.ts.
import { randomUUID } from 'node:crypto';
import { connect, type JetStreamManager } from 'nats';
import { startExperiment } from './lib/experiment.js';
import { CpuMeter, closedLoop, httpCaller } from './lib/measure.js';
import { ticketTexts } from './lib/seed.js';
import { entry, queryFor } from './synthetic-kb.js';

const TICKETS = Number(process.argv[2] ?? 5000);
const ROUNDS = Number(process.argv[3] ?? 2);
const KB_ENTRIES = 1000;
const CONSUMERS = ['answers', 'digest'];
const DURABLES = ['answers-triage', 'digest-aggregator'];

const { stack, backends, key, processes, stop } = await startExperiment(
  'drain-path',
  ['tickets', 'knowledge', 'answers', 'digest'],
  'warn',
);
const nc = await connect({ servers: backends.nats.url });
try {
  const entries = Array.from({ length: KB_ENTRIES }, (_, i) => entry(i));
  await stack.admin('POST', '/admin/v1/orgs/bench/kb/entries', entries);
  // Half the tickets paraphrase a KB question (answered, a deflection counted), half do not.
  const others = ticketTexts(TICKETS);
  const texts = Array.from({ length: TICKETS }, (_, i) =>
    i % 2 === 0 ? queryFor(entries[(i * 7919) % KB_ENTRIES]!.question) : others[i]!,
  );
  const jsm = await nc.jetstreamManager();
  const http = httpCaller(stack.baseUrl(), 32);
  const headers = { authorization: `Bearer ${key}`, 'content-type': 'application/json' };

  for (let round = 1; round <= ROUNDS; round++) {
    await Promise.all(CONSUMERS.map((n) => stack.service(n).stop()));
    await closedLoop(
      `create ${TICKETS} tickets (consumers stopped)`,
      32,
      600,
      TICKETS,
      (i) =>
        http.request(
          'POST',
          '/api/v1/agent/tickets',
          { ...headers, 'idempotency-key': randomUUID() },
          JSON.stringify({ content: texts[i % texts.length] }),
        ),
      () => [],
      0,
    );
    // Every created event must be in the stream before the clock starts (the relay is async).
    await waitFor(async () => (await subjectCount(jsm, 'tickets.created')) >= TICKETS * round);
    const triagedBefore = await subjectCount(jsm, 'tickets.triaged');

    const cpu = new CpuMeter(processes);
    const started = Date.now();
    for (const n of CONSUMERS) stack.service(n).start();
    cpu.start(); // the consumers' pids exist from here; their start-up counts
    await Promise.all(CONSUMERS.map((n) => stack.waitForService(n)));
    // Drained: every ticket triaged, and both consumers have nothing pending or unacknowledged.
    await waitFor(
      async () =>
        (await subjectCount(jsm, 'tickets.triaged')) - triagedBefore >= TICKETS &&
        (await backlog(jsm)) === 0,
    );
    const seconds = (Date.now() - started) / 1000;
    const perTicket = Object.entries(cpu.perRequest(TICKETS))
      .map(([name, ms]) => `${name} ${ms}`)
      .join(', ');
    console.log(
      `round ${round}: drained ${TICKETS} tickets in ${seconds.toFixed(1)} s = ${Math.round(TICKETS / seconds)} tickets/s`,
    );
    console.log(`  CPU ms/ticket: ${perTicket}`);
  }
  http.close();
} finally {
  await nc.close();
  await stop();
}

async function subjectCount(jsm: JetStreamManager, subject: string): Promise<number> {
  const info = await jsm.streams.info('TICKETS', { subjects_filter: subject });
  return info.state.subjects?.[subject] ?? 0;
}

async function backlog(jsm: JetStreamManager): Promise<number> {
  let total = 0;
  for (const name of DURABLES) {
    const info = await jsm.consumers.info('TICKETS', name);
    total += info.num_pending + info.num_ack_pending;
  }
  return total;
}

async function waitFor(done: () => Promise<boolean>, timeoutMs = 900_000): Promise<void> {
  const until = Date.now() + timeoutMs;
  while (!(await done().catch(() => false))) {
    if (Date.now() > until) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 100));
  }
}
