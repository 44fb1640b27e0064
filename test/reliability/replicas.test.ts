// Two replicas of every service on the same MariaDB, Redis and NATS (and one Qdrant stand-in):
// each caller's `*_ADDR` lists both replicas of the service it calls. While a few workers keep
// calling all five operations through two gateways, one replica of each service in turn — and
// one gateway — is killed with SIGKILL and left down for a while, then started again. Then:
// - every request ended within its client deadline with a success, a JSON 503 with
//   Retry-After, or a documented 429; every operation works again within 10 s of each kill,
//   with no restart by hand (the replica left serves), and a restarted replica gets calls again;
// - every idempotency key that got a 201 has exactly one ticket, one tickets.created event
//   each (events = tickets), the digest counts each ticket once, and each ticket's triage was
//   applied once although two answers replicas share the consumer;
// - the weekly digest due was run once although both digest replicas schedule it;
// - the monthly deflection limit was never exceeded (one ledger row for the month);
// - a key's quota is one quota across both gateways;
// - an import through one knowledge replica is found through the other at once.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { QdrantStandIn } from '../support/qdrant-standin.js';
import { queryRows, waitForConsumer } from '../support/pipeline.js';
import { readStream } from '../support/events.js';
import { SHORT_KB } from '../support/kb.js';
import {
  consumerDeliveries,
  LimitedKeyClient,
  maxInWindow,
  servedCalls,
} from '../support/replica-faults.js';
import { ALL_SCOPES, Stack, waitFor } from '../support/stack.js';
import type { ServiceProcess } from '../support/process.js';
import { OPS, SteadyLoad, type Op } from '../support/steady-load.js';

const ORG = 'replica-org';
const LIMITED_ORG = 'replica-limited';
const KEY_LIMIT_PER_MIN = 30;
const DEFLECTION_LIMIT = 5;
const GRPC_DEADLINE_MS = 2_500;
const CLIENT_TIMEOUT_MS = GRPC_DEADLINE_MS + 2_000;
/** How long one replica of a service stays down. */
const DOWN_MS = 6_000;
const RESUME_WITHIN_MS = 10_000;

const KB = [
  ...SHORT_KB.slice(0, 2),
  {
    id: 'invoices',
    question: 'Where can I download my invoices?',
    answer: 'Invoices are under Billing > Invoices; each one can be downloaded as a PDF.',
  },
];
const QUESTIONS = KB.map((e) => e.question);

let qdrant: QdrantStandIn;
let stack: Stack;
let key: string;
let load: SteadyLoad;
let limited: LimitedKeyClient;
const gatewayDown = [false, false];
const gatewayEpoch = [0, 0];

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

before(async () => {
  qdrant = await QdrantStandIn.start();
  stack = await Stack.onTestBackends('replicas', {
    gateways: 2,
    replicasPerService: 2,
    env: {
      // The embedded index is one process's (a lock on its folder): replicas share Qdrant.
      QDRANT_URL: qdrant.url,
      GRPC_DEADLINE_MS: String(GRPC_DEADLINE_MS),
      // Redis is not what fails here. With the default 250 ms, a CPU-starved machine (load
      // average 24) timed Redis commands out, and each gateway's per-process fallback limiter
      // answered: a key got 32 of 30 in one window across the two gateways. The silent-Redis
      // suite covers that fallback.
      REDIS_COMMAND_TIMEOUT_MS: '2000',
      // Both digest replicas schedule the due week at once, every 200 ms.
      DIGEST_SCHEDULER_ENABLED: 'true',
      DIGEST_SCHEDULER_TICK_MS: '200',
      DIGEST_SCHEDULE_MAX_LAG_WAIT_MS: '0',
      DIGEST_ACK_WAIT_MS: '2000',
      TRIAGE_ACK_WAIT_MS: '2000',
      OUTBOX_MAX_BACKOFF_MS: '1000',
      SHUTDOWN_GRACE_MS: '2000',
    },
  });
  key = await stack.orgWithKey(ORG, ALL_SCOPES, {
    rate_limit_per_key_per_min: 1_000_000,
    rate_limit_per_org_per_min: 1_000_000,
    deflection_monthly_limit: DEFLECTION_LIMIT,
  });
  const limitedKey = await stack.orgWithKey(LIMITED_ORG, ['kb:read'], {
    rate_limit_per_key_per_min: KEY_LIMIT_PER_MIN,
    rate_limit_per_org_per_min: 1_000_000,
  });
  await stack.admin('POST', `/admin/v1/orgs/${ORG}/kb/entries`, KB);
  await stack.admin('POST', `/admin/v1/orgs/${LIMITED_ORG}/kb/entries`, KB);
  limited = new LimitedKeyClient(
    () => [0, 1].filter((i) => !gatewayDown[i]).map((i) => stack.baseUrl(i)),
    limitedKey,
    200,
  );
});

after(async () => {
  await load?.stop();
  await limited?.stop();
  await stack?.stop();
  await qdrant?.stop();
});

/** Every operation until each one succeeds (through a live gateway); returns the slowest. */
async function probeAll(): Promise<number> {
  const gw = gatewayDown[1] ? 0 : 1;
  const times = await Promise.all(OPS.map((op: Op) => load.probe(op, RESUME_WITHIN_MS, gw)));
  return Math.max(...times);
}

interface KillRecord {
  name: string;
  requests: number;
  /** Share of the requests sent while the replica was down answered with a success within 1 s. */
  fastShare: number;
  unavailable: number;
  /** Until every operation succeeded again after the kill. */
  resumeMs: number;
  /** The last failed request after the kill, in ms after it (0: none). */
  lastFailureMs: number;
  /** Calls the restarted replica served within 3 s of being ready (undefined: not measured). */
  servedAfterRestart: number | undefined;
}

/** Kills one process with SIGKILL, leaves it down for DOWN_MS, then starts it again. */
async function killReplica(
  name: string,
  proc: ServiceProcess,
  restart: () => Promise<void>,
  servesCalls: boolean,
  onKill: () => void = () => undefined,
): Promise<KillRecord> {
  const phase = `kill -9 ${name}`;
  load.phase = phase;
  const killedAt = Date.now();
  onKill();
  await proc.stop('SIGKILL');
  const resumeMs = await probeAll();
  await sleep(Math.max(0, killedAt + DOWN_MS - Date.now()));
  const stats = load.phases.get(phase)!;
  const lastFailureMs = load.lastFailureAt > killedAt ? load.lastFailureAt - killedAt : 0;
  load.phase = `${name} restarted`;
  await restart();
  let servedAfterRestart: number | undefined;
  if (servesCalls) {
    await sleep(3_000);
    servedAfterRestart = await servedCalls(stack, proc.name);
  }
  assert.ok(
    proc.running,
    `${proc.name} is not running after its restart:\n${proc.logs().slice(-3000)}`,
  );
  return {
    name,
    requests: stats.sent - stats.refused,
    // A connection refused by the killed gateway is sent again to the other at once (as a load
    // balancer does): counted once, by where it ended.
    fastShare: stats.fastSuccess / Math.max(1, stats.sent - stats.refused),
    unavailable: stats.unavailable,
    resumeMs,
    lastFailureMs,
    servedAfterRestart,
  };
}

function killUpstream(proc: ServiceProcess, servesCalls = true): Promise<KillRecord> {
  return killReplica(
    proc.name,
    proc,
    async () => {
      proc.start();
      await stack.waitForProcess(proc);
    },
    servesCalls,
  );
}

function killGateway(i: number): Promise<KillRecord> {
  return killReplica(
    `gateway-${i}`,
    stack.gateways[i]!,
    async () => {
      stack.gateways[i]!.start();
      await stack.waitForGateway(i);
      gatewayDown[i] = false;
    },
    false,
    () => {
      gatewayDown[i] = true;
      gatewayEpoch[i]!++;
    },
  );
}

const replica = (service: string) => stack.replicas.find((r) => r.service === service)!;

/** Violations as "count × phase / op / detail" lines, most frequent first. */
function groupViolations(l: SteadyLoad): string[] {
  const groups = new Map<string, number>();
  for (const v of l.violations) {
    const k = `${v.phase} / ${v.op} / ${v.detail.replace(/\d{4,}/g, 'N').slice(0, 160)}`;
    groups.set(k, (groups.get(k) ?? 0) + 1);
  }
  return [...groups].sort((a, b) => b[1] - a[1]).map(([k, n]) => `${n} × ${k}`);
}

test('when one replica of each service is killed under load, then the other serves at once, nothing is lost or doubled, and shared limits and runs stay shared', async () => {
  const t0 = Date.now();
  load = new SteadyLoad({
    gateways: {
      count: 2,
      url: (i) => stack.baseUrl(i),
      isDown: (i) => gatewayDown[i]!,
      epoch: (i) => gatewayEpoch[i]!,
    },
    key,
    workers: 6,
    timeoutMs: CLIENT_TIMEOUT_MS,
    paceMs: 40,
    questions: QUESTIONS,
  });
  load.start();
  limited.start();
  await sleep(3_000);

  // Calls are spread: every replica of the services the gateway calls has served some.
  for (const proc of [...stack.upstreams.values(), ...stack.replicas]) {
    assert.ok((await servedCalls(stack, proc.name)) > 0, `${proc.name} served no call`);
  }

  // An import through either gateway (and so either knowledge replica) is found by both at once.
  const entry = {
    id: 'replica-import',
    question: 'How do I export my data to a spreadsheet?',
    answer: 'Use Settings > Export and choose CSV.',
  };
  await stack.admin('POST', `/admin/v1/orgs/${ORG}/kb/entries`, [entry], 0);
  for (let i = 0; i < 8; i++) {
    const res = await fetch(
      `${stack.baseUrl(i % 2)}/api/v1/agent/kb/search?query=${encodeURIComponent(entry.question)}&limit=3`,
      { headers: { authorization: `Bearer ${key}` } },
    );
    const body = (await res.json()) as { results: { question: string }[] };
    assert.ok(
      body.results.some((r) => r.question === entry.question),
      `search ${i} did not find the new entry: ${JSON.stringify(body)}`,
    );
  }

  const kills: KillRecord[] = [];
  kills.push(await killUpstream(stack.service('tickets')));
  kills.push(await killUpstream(replica('knowledge')));
  kills.push(await killUpstream(stack.service('answers')));
  kills.push(await killUpstream(replica('digest')));
  kills.push(await killGateway(1));

  load.phase = 'cool-down';
  await sleep(1_000);
  await load.stop();
  await limited.stop();

  for (const k of kills) {
    console.log(
      `  ${k.name} (one of two left for ${DOWN_MS / 1000} s): requests ${k.requests}, ` +
        `success within 1 s ${k.fastShare.toFixed(3)}, 503s ${k.unavailable}, ` +
        `all operations work after ${k.resumeMs} ms, last failure at +${k.lastFailureMs} ms` +
        (k.servedAfterRestart === undefined
          ? ''
          : `, calls served by it within 3 s of its restart ${k.servedAfterRestart}`),
    );
  }
  assert.deepEqual(
    groupViolations(load),
    [],
    `${load.violations.length} requests broke the contract`,
  );
  assert.equal(load.lost, 0, 'requests lost');
  assert.equal(load.duplicates, 0, 'idempotency keys answered with two ticket ids');
  for (const k of kills) {
    assert.ok(k.resumeMs <= RESUME_WITHIN_MS, `${k.name}: operations back after ${k.resumeMs} ms`);
    if (k.servedAfterRestart !== undefined) {
      assert.ok(k.servedAfterRestart > 0, `${k.name}: no call reached it after its restart`);
    }
  }

  const db = stack.mysqlUrl;
  // Every key that got a 201 has exactly one ticket, the one it was told; nothing else exists.
  const rows = await queryRows<{ idempotency_key: string; n: number; id: number }>(
    db,
    'SELECT idempotency_key, COUNT(*) AS n, MIN(number) AS id FROM tickets WHERE org_id = ? GROUP BY idempotency_key',
    [ORG],
  );
  const byKey = new Map(rows.map((r) => [r.idempotency_key, r]));
  assert.equal(rows.filter((r) => Number(r.n) !== 1).length, 0, 'keys with more than one ticket');
  for (const [k, id] of load.creates) assert.equal(Number(byKey.get(k)?.id), id, `ticket of ${k}`);
  assert.equal(rows.length, load.creates.size, 'tickets in MySQL = keys that got a 201');
  const tickets = rows.length;

  // The digest's consumer (shared by both replicas) counts each ticket once.
  const digestCounts = async () => {
    const [t] = await queryRows<{ n: number }>(
      db,
      'SELECT COUNT(*) AS n FROM digest_tickets WHERE org_id = ?',
      [ORG],
    );
    const [w] = await queryRows<{ n: number | null }>(
      db,
      'SELECT SUM(ticket_count) AS n FROM digest_weeks WHERE org_id = ?',
      [ORG],
    );
    return { tickets: Number(t!.n), weeks: Number(w!.n ?? 0) };
  };
  let counts = await digestCounts();
  await waitFor(
    async () => (counts = await digestCounts()).weeks >= tickets,
    60_000,
    () => `digest counted ${JSON.stringify(counts)} of ${tickets} tickets`,
    250,
  );
  await waitForConsumer(stack.nats.url, 'digest-aggregator', 30_000);
  counts = await digestCounts();
  assert.deepEqual(counts, { tickets, weeks: tickets }, 'digest aggregates count each ticket once');

  // Events = tickets: one tickets.created per ticket of the organization.
  const created = (await readStream(stack.nats.url)).filter(
    (m) => m.event.type === 'tickets.created' && m.event.org_id === ORG,
  );
  assert.equal(
    new Set(created.map((m) => m.event.ticket_id)).size,
    tickets,
    'tickets with an event',
  );
  assert.equal(created.length, tickets, 'tickets.created events');

  // Triage (two answers replicas on one durable consumer): applied once per ticket.
  const triage = async () => {
    const [r] = await queryRows<{ n: number; tickets: number }>(
      db,
      `SELECT COUNT(*) AS n, COUNT(DISTINCT a.ticket_id) AS tickets FROM tickets_triage_applied a
         JOIN tickets t ON t.id = a.ticket_id WHERE t.org_id = ?`,
      [ORG],
    );
    return { applied: Number(r!.n), tickets: Number(r!.tickets) };
  };
  let applied = await triage();
  await waitFor(
    async () => (applied = await triage()).tickets >= tickets,
    60_000,
    () => `triage applied to ${JSON.stringify(applied)} of ${tickets} tickets`,
    250,
  );
  assert.deepEqual(applied, { applied: tickets, tickets }, 'triage applied once per ticket');
  await waitForConsumer(stack.nats.url, 'answers-triage', 30_000);
  const triageDeliveries = await consumerDeliveries(stack.nats.url, 'answers-triage');

  // The weekly digest due was run once by the two schedulers.
  const runs = await queryRows<{ week_start: string; finished: number }>(
    db,
    'SELECT week_start, finished_at IS NOT NULL AS finished FROM digest_runs',
  );
  const started = stack.allLogs().match(/weekly digest run started/g)?.length ?? 0;
  assert.equal(runs.length, 1, `digest runs: ${JSON.stringify(runs)}`);
  assert.equal(Number(runs[0]!.finished), 1, 'the weekly run finished');
  assert.equal(started, 1, 'weekly runs started across both digest replicas');

  // The deflection limit held across the two answers replicas: one month row, never past it.
  const ledger = await queryRows<{ used: number }>(
    db,
    'SELECT used FROM answers_deflection_months WHERE org_id = ?',
    [ORG],
  );
  assert.equal(ledger.length, 1, 'one ledger row for the month');
  assert.ok(Number(ledger[0]!.used) <= DEFLECTION_LIMIT, `ledger used ${ledger[0]!.used}`);
  assert.ok(load.highConfidence <= DEFLECTION_LIMIT, `${load.highConfidence} deflections`);
  assert.ok(load.deflectionLimited > 0, 'the limit was reached during the run');

  // One quota per key across both gateways: no 60 s ever allowed more (the limiter's windows
  // slide). Times are when the answers came back, so two allowed requests whose answers were
  // slowed may look closer than Redis counted them: a window 2 s short of 60 s is checked.
  assert.ok(limited.allowed.length > 0 && limited.refused > 0, 'the limited key reached its limit');
  const sliding = maxInWindow(
    limited.allowed.map((a) => a.at),
    58_000,
  );
  assert.ok(sliding <= KEY_LIMIT_PER_MIN, `${sliding} allowed within 58 s`);

  assert.deepEqual(stack.leakedSecrets(), [], 'secrets found in service logs');
  const seconds = ((Date.now() - t0) / 1000).toFixed(0);
  console.log(
    `replica suite: kills ${kills.length}, requests sent ${load.sent}, lost ${load.lost}, ` +
      `duplicates ${load.duplicates}, 503s ${load.unavailable}, tickets ${tickets} ` +
      `(events ${created.length}, digest ${counts.weeks}, triage applied ${applied.applied}; ` +
      `triage deliveries ${triageDeliveries.deliveries}, redelivered ${triageDeliveries.redelivered}), ` +
      `deflections ${ledger[0]!.used}/${DEFLECTION_LIMIT}, weekly runs ${started}, limited key: ` +
      `${limited.allowed.length} allowed, at most ${sliding} within 58 s (limit ` +
      `${KEY_LIMIT_PER_MIN} per 60 s), ${seconds} s`,
  );
});
