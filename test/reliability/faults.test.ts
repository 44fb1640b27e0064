// Fault injection under load (issue 9.1). Every service runs as its own process against this
// suite's OWN MariaDB, Redis and NATS (killing them must not disturb other suites), with two
// gateway replicas. While a few workers keep calling all five operations, each service and each
// backend in turn is killed with SIGKILL and restarted, and some are frozen with SIGSTOP
// (a hang) and resumed. Then:
// - every request ended within its client deadline with a success, a JSON 503
//   service_unavailable with Retry-After, or (answers) 429 deflection_limit_reached; requests to
//   a killed gateway were refused and retried on the other replica, none lost;
// - after each recovery every operation works again within 10 s;
// - every idempotency key that got a 201 has exactly one ticket in MySQL (retries across the
//   faults never duplicated), and the digest's aggregates count each ticket exactly once;
// - the monthly deflection count never exceeded its (small) limit;
// - no process crashed, and no secret appears in any log.
import { FAULT_ENV, groupViolations } from '../support/fault-run.js';
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  freezeProcess,
  startMariaDb,
  startNats,
  startRedis,
  type MariaDbHandle,
  type NatsHandle,
  type RedisHandle,
} from '../support/backends.js';
import { httpRequest } from '../support/http-raw.js';
import { queryRows, waitForConsumer } from '../support/pipeline.js';
import { leakedSecrets } from '../support/secrets.js';
import { SHORT_KB } from '../support/kb.js';
import { ALL_SCOPES, Stack, waitFor } from '../support/stack.js';
import { OPS, SteadyLoad, type Op } from '../support/steady-load.js';

const ORG = 'fault-org';
const DEFLECTION_LIMIT = 5;
const GRPC_DEADLINE_MS = 2_500;
const CLIENT_TIMEOUT_MS = GRPC_DEADLINE_MS + 2_000;
const DOWN_MS = 3_000;
const LONG_OUTAGE_MS = 30_000;
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

let dir: string;
let mysql: MariaDbHandle;
let redis: RedisHandle;
let nats: NatsHandle;
let stack: Stack;
let key: string;
let load: SteadyLoad;
const gatewayDown = [false, false];
const gatewayEpoch = [0, 0];

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'fault-'));
  [mysql, redis, nats] = await Promise.all([
    startMariaDb(join(dir, 'mysql')),
    startRedis(join(dir, 'redis')),
    startNats(join(dir, 'nats')),
  ]);
  stack = await new Stack({
    dir,
    mysqlUrl: mysql.url,
    redisUrl: redis.url,
    natsUrl: nats.url,
    gateways: 2,
    env: FAULT_ENV,
  }).start();
  key = await stack.orgWithKey(ORG, ALL_SCOPES, {
    rate_limit_per_key_per_min: 1_000_000,
    rate_limit_per_org_per_min: 1_000_000,
    deflection_monthly_limit: DEFLECTION_LIMIT,
  });
  await stack.admin('POST', `/admin/v1/orgs/${ORG}/kb/entries`, KB);
});

after(async () => {
  await load?.stop();
  // Never leave a frozen process behind.
  for (const p of stack ? [...stack.upstreams.values(), ...stack.gateways] : []) {
    if (p.running && p.pid) process.kill(p.pid, 'SIGCONT');
  }
  for (const b of [mysql, redis, nats]) b?.kill('SIGCONT');
  await stack?.stop();
  await Promise.allSettled([mysql?.stop(), redis?.stop(), nats?.stop()]);
  if (dir && process.env.KEEP_TEST_TMP !== '1') rmSync(dir, { recursive: true, force: true });
});

interface FaultRecord {
  name: string;
  /** Until every operation succeeded again after the repair. */
  resumeMs: number;
  /** Until a ticket created after the repair was counted by the digest (events flow again). */
  eventsMs: number;
  unavailable: number;
}

/**
 * Creates a ticket (retrying its key) and waits until the digest has counted it: the whole
 * event path tickets → outbox → NATS → digest works again. Returns the milliseconds taken.
 */
async function eventProbe(): Promise<number> {
  const t0 = Date.now();
  const idempotencyKey = `event-probe-${randomBytes(6).toString('hex')}`;
  let id: number | undefined;
  while (id === undefined) {
    const o = await httpRequest(
      stack.baseUrl(gatewayDown[1] ? 0 : 1),
      'POST',
      '/api/v1/agent/tickets',
      {
        headers: {
          authorization: `Bearer ${key}`,
          'content-type': 'application/json',
          'idempotency-key': idempotencyKey,
        },
        body: JSON.stringify({ content: `event probe ${idempotencyKey}` }),
        timeoutMs: CLIENT_TIMEOUT_MS,
      },
    );
    if (o.kind === 'response' && o.status === 201) id = o.json.ticket_id as number;
    else if (Date.now() - t0 > RESUME_WITHIN_MS) throw new Error('event probe: no 201');
    else await sleep(100);
  }
  load.creates.set(idempotencyKey, id);
  await waitFor(
    async () =>
      (
        await queryRows(
          mysql.url,
          'SELECT 1 FROM digest_tickets WHERE org_id = ? AND ticket_id = ?',
          [ORG, id],
        )
      ).length > 0,
    RESUME_WITHIN_MS,
    () => `the digest has not counted ticket ${id} ${RESUME_WITHIN_MS} ms after recovery`,
    100,
  );
  return Date.now() - t0;
}

/** Every operation through either gateway until each one succeeds; returns the slowest. */
async function probeAll(): Promise<number> {
  const times = await Promise.all(
    OPS.map((op: Op) => load.probe(op, RESUME_WITHIN_MS, gatewayDown[1] ? 0 : 1)),
  );
  return Math.max(...times);
}

/** Runs one fault: break, wait, repair; then measures how soon every operation works. */
async function inject(
  name: string,
  breakIt: () => Promise<void> | void,
  repair: () => Promise<void>,
  downMs = DOWN_MS,
): Promise<FaultRecord> {
  const before = load.unavailable;
  load.phase = `${name}: down`;
  await breakIt();
  await sleep(downMs);
  load.phase = `${name}: recovering`;
  await repair();
  const [resumeMs, eventsMs] = await Promise.all([probeAll(), eventProbe()]);
  load.phase = `${name}: after`;
  await sleep(1_000);
  for (const p of [...stack.upstreams.values(), ...stack.gateways]) {
    assert.ok(p.running, `${p.name} is not running after ${name}:\n${p.logs().slice(-3000)}`);
  }
  return { name, resumeMs, eventsMs, unavailable: load.unavailable - before };
}

function killService(name: string, downMs = DOWN_MS) {
  return inject(
    `kill -9 ${name}${downMs > DOWN_MS ? ` (${downMs / 1000} s outage)` : ''}`,
    () => stack.service(name).stop('SIGKILL'),
    async () => {
      stack.service(name).start();
      await stack.waitForService(name);
    },
    downMs,
  );
}

function killGateway(i: number) {
  return inject(
    `kill -9 gateway-${i}`,
    async () => {
      gatewayDown[i] = true;
      gatewayEpoch[i]!++;
      await stack.gateways[i]!.stop('SIGKILL');
    },
    async () => {
      stack.gateways[i]!.start();
      await stack.waitForGateway(i);
      gatewayDown[i] = false;
    },
  );
}

function killBackend(handle: MariaDbHandle | RedisHandle | NatsHandle) {
  return inject(
    `kill -9 ${handle.name}`,
    () => handle.kill('SIGKILL'),
    () => handle.restart(),
  );
}

/** SIGSTOP for longer than the client's deadline: a hang, not a crash. */
function pause(name: string, pid: () => number | undefined) {
  return inject(
    `SIGSTOP ${name}`,
    () => freezeProcess(pid()!),
    async () => {
      process.kill(pid()!, 'SIGCONT');
    },
    CLIENT_TIMEOUT_MS + 1_500,
  );
}

test('when services and backends are killed, restarted and frozen under load, then no request hangs or is lost, nothing is duplicated and every ticket is counted once', async () => {
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
  await sleep(2_000);

  const faults: FaultRecord[] = [];
  faults.push(await killGateway(0));
  faults.push(await killService('tickets'));
  // A long outage: reconnect back-off must not keep callers away once the service is back.
  faults.push(await killService('knowledge', LONG_OUTAGE_MS));
  faults.push(await killService('answers'));
  faults.push(await killService('digest'));
  faults.push(await killBackend(mysql));
  faults.push(await killBackend(redis));
  faults.push(await killBackend(nats));
  faults.push(await pause('knowledge', () => stack.service('knowledge').pid));
  faults.push(await pause('mariadb', () => mysql.pid));
  faults.push(await pause('redis', () => redis.pid));

  load.phase = 'cool-down';
  await sleep(1_000);
  await load.stop();

  for (const f of faults) {
    console.log(
      `  ${f.name}: 503s ${f.unavailable}, all operations back after ${f.resumeMs} ms, ` +
        `events flowing after ${f.eventsMs} ms`,
    );
  }
  assert.deepEqual(
    groupViolations(load),
    [],
    `${load.violations.length} requests broke the contract`,
  );
  assert.equal(load.lost, 0, 'requests lost');
  assert.equal(load.duplicates, 0, 'idempotency keys answered with two ticket ids');
  for (const f of faults) {
    assert.ok(f.resumeMs <= RESUME_WITHIN_MS, `${f.name}: operations back after ${f.resumeMs} ms`);
    assert.ok(f.eventsMs <= RESUME_WITHIN_MS, `${f.name}: events back after ${f.eventsMs} ms`);
  }

  // Every key that got a 201 has exactly one ticket, the one it was told; nothing else exists.
  const rows = await queryRows<{ idempotency_key: string; n: number; id: number }>(
    mysql.url,
    'SELECT idempotency_key, COUNT(*) AS n, MIN(number) AS id FROM tickets WHERE org_id = ? GROUP BY idempotency_key',
    [ORG],
  );
  const byKey = new Map(rows.map((r) => [r.idempotency_key, r]));
  let duplicateRows = 0;
  for (const r of rows) if (Number(r.n) !== 1) duplicateRows++;
  assert.equal(duplicateRows, 0, 'idempotency keys with more than one ticket');
  for (const [k, id] of load.creates) {
    assert.equal(Number(byKey.get(k)?.id), id, `ticket of key ${k}`);
  }
  assert.equal(rows.length, load.creates.size, 'tickets in MySQL = keys that got a 201');

  // The digest consumer catches up and counts every ticket exactly once.
  const tickets = load.creates.size;
  const digestCounts = async () => {
    const [t] = await queryRows<{ n: number }>(
      mysql.url,
      'SELECT COUNT(*) AS n FROM digest_tickets WHERE org_id = ?',
      [ORG],
    );
    const [w] = await queryRows<{ n: number | null }>(
      mysql.url,
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
  await waitForConsumer(nats.url, 'digest-aggregator', 30_000);
  counts = await digestCounts();
  assert.deepEqual(counts, { tickets, weeks: tickets }, 'digest aggregates count each ticket once');

  // The deflection ledger never went past its limit.
  const [ledger] = await queryRows<{ used: number; reserved: number }>(
    mysql.url,
    'SELECT SUM(used) AS used, SUM(reserved) AS reserved FROM answers_deflection_months WHERE org_id = ?',
    [ORG],
  );
  const usage = await stack.admin<{ deflections_used: number; deflection_limit: number }>(
    'GET',
    `/admin/v1/orgs/${ORG}/usage`,
    undefined,
    1,
  );
  assert.ok(Number(ledger!.used) <= DEFLECTION_LIMIT, `ledger used ${ledger!.used}`);
  assert.ok(usage.deflections_used <= DEFLECTION_LIMIT, JSON.stringify(usage));
  assert.ok(
    load.highConfidence <= DEFLECTION_LIMIT,
    `${load.highConfidence} high-confidence answers`,
  );
  assert.ok(load.deflectionLimited > 0, 'the limit was reached during the run');

  // Secrets never reach the logs, whatever failed.
  const leaks = leakedSecrets(stack.allLogs(), [
    key,
    stack.adminToken,
    new URL(mysql.url).password,
  ]);
  assert.deepEqual(leaks, [], 'secrets found in service logs');

  const seconds = ((Date.now() - t0) / 1000).toFixed(0);
  console.log(
    `fault suite: faults injected ${faults.length}, requests sent ${load.sent}, ` +
      `requests lost ${load.lost}, duplicates ${load.duplicates}, 503s ${load.unavailable}, ` +
      `refused by killed gateway (retried) ${load.refusedByKilledGateway}, tickets ${tickets}, ` +
      `deflections ${ledger!.used}/${DEFLECTION_LIMIT}, slowest recovery ` +
      `${Math.max(...faults.map((f) => f.resumeMs))} ms (events ` +
      `${Math.max(...faults.map((f) => f.eventsMs))} ms), ${seconds} s`,
  );
});
