// A full disk under load. Each store gets a small tmpfs of its own, is filled to the last byte
// while every operation keeps running, then freed:
// - the embedded store of `npm start` (DATA_DIR), then a kill -9 of tickets in the middle of
//   its writes and a restart;
// - MariaDB's datadir and NATS's JetStream store, one after the other, under the stack.
// Invariants: every request ends within its deadline with a success or a JSON 503 with
// Retry-After (never a 500); within 10 s of the space coming back every operation works again
// with no restart; every ticket acknowledged with a 201 exists once, under the number it was
// given; events = tickets (each ticket's created event once); the embedded store restarts with
// every acknowledged record. Needs root (mount -t tmpfs); skipped otherwise.
import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect, Empty } from 'nats';
import { startMariaDb, startNats, type NatsHandle } from '../support/backends.js';
import { SmallDisk, tmpfsUnavailable } from '../support/disk-fill.js';
import {
  FAULT_ENV,
  RESUME_WITHIN_MS,
  faultOrg,
  groupViolations,
  phaseLine,
  probeAll,
  steadyLoad,
} from '../support/fault-run.js';
import { queryRows, waitForConsumer } from '../support/pipeline.js';
import { requireEnv } from '../support/mysql.js';
import { Stack, waitFor } from '../support/stack.js';
import type { SteadyLoad } from '../support/steady-load.js';

const ORG = 'disk-org';
const FULL_MS = 6_000;
/** How often the filler takes back space a store freed while the disk was full. */
const TOP_UP_EVERY_MS = 100;
/**
 * Events after NATS's store was full: the outbox keeps every event, but JetStream does not come
 * back by itself (nats-server 2.9 leaves its API hanging after ENOSPC, 2.10 disables JetStream),
 * so a supervisor restarts NATS as the deployment's liveness probe does (natsSupervisor below),
 * and events reach the digest again within this bound of freeing the disk.
 */
const EVENTS_WITHIN_MS = 60_000;
/** The supervisor's probe: JetStream's API answers within PROBE_TIMEOUT_MS, every PROBE_EVERY_MS. */
const PROBE_EVERY_MS = 2_000;
const PROBE_TIMEOUT_MS = 2_000;
const PROBE_FAILURES = 3;
const skip = tmpfsUnavailable();
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

const cleanups: Array<() => Promise<void> | void> = [];
after(async () => {
  for (const c of cleanups.reverse()) await Promise.resolve(c()).catch(() => undefined);
});

interface DiskFault {
  name: string;
  /** Creates need the full store (not NATS: events wait in the outbox). */
  refusesWrites: boolean;
  filled: number;
  recoveryMs: number;
}

/** Fills `disk` under load for FULL_MS, frees it, and measures until every operation works. */
async function fillAndFree(
  load: SteadyLoad,
  disk: SmallDisk,
  name: string,
  refusesWrites = true,
): Promise<DiskFault> {
  load.phase = `${name}: full`;
  let filled = disk.fill();
  // A store may free a block of its own while full (NATS drops a half-written file), which would
  // end the fault early: the filler takes back whatever is freed until FULL_MS is over.
  const until = Date.now() + FULL_MS;
  while (Date.now() < until) {
    await sleep(TOP_UP_EVERY_MS);
    filled += disk.fill();
  }
  assert.equal(disk.freeBytes(), 0, `${name}: the disk stayed full`);
  disk.free();
  const t0 = Date.now();
  load.phase = `${name}: freed`;
  await probeAll(load);
  const recoveryMs = Date.now() - t0;
  console.log(
    `  ${name}: filled ${(filled / 2 ** 20).toFixed(1)} MiB to the last byte for ${FULL_MS / 1000} s: ` +
      `${phaseLine(load, `${name}: full`)}; every operation back ${recoveryMs} ms after freeing`,
  );
  return { name, refusesWrites, filled, recoveryMs };
}

function assertContract(load: SteadyLoad, faults: DiskFault[]): void {
  assert.deepEqual(
    groupViolations(load),
    [],
    `${load.violations.length} requests broke the contract`,
  );
  assert.equal(load.lost, 0, 'requests lost');
  assert.equal(load.duplicates, 0, 'idempotency keys answered with two ticket ids');
  for (const f of faults)
    assert.ok(f.recoveryMs <= RESUME_WITHIN_MS, `${f.name}: back after ${f.recoveryMs} ms`);
  for (const f of faults.filter((f) => f.refusesWrites)) {
    const s = load.phases.get(`${f.name}: full`);
    assert.ok(s && s.unavailable > 0, `${f.name}: no request was refused while the disk was full`);
  }
}

describe('a full disk', { skip }, () => {
  it('when DATA_DIR of the embedded store fills to the last byte under load, then writes get 503 with Retry-After, nothing torn stays, everything works again once space is freed, and a kill -9 mid-write loses nothing acknowledged', async () => {
    const t0 = Date.now();
    const dir = mkdtempSync(join(tmpdir(), 'disk-embedded-'));
    const disk = SmallDisk.mount(join(dir, 'data'), 64);
    cleanups.push(
      () => rmSync(dir, { recursive: true, force: true }),
      () => disk.unmount(),
    );
    const stack = await new Stack({ dir, env: { ...FAULT_ENV, DATA_DIR: disk.dir } }).start();
    cleanups.push(() => stack.stop());
    const key = await faultOrg(stack, ORG, {
      rate_limit_per_key_per_min: 1_000_000,
      rate_limit_per_org_per_min: 1_000_000,
    });
    const load = steadyLoad(stack, key);
    load.start();
    cleanups.push(() => load.stop());
    await waitFor(
      async () => load.creates.size >= 20,
      30_000,
      () => 'no tickets created',
    );

    const faults = [await fillAndFree(load, disk, 'embedded DATA_DIR full')];
    // A torn line would make tickets fail to start: restart it (gracefully, then kill -9 mid-write).
    load.phase = 'tickets restart';
    await stack.restartService('tickets');
    load.phase = 'kill -9 tickets mid-write';
    await sleep(500);
    await stack.service('tickets').stop('SIGKILL');
    stack.service('tickets').start();
    await stack.waitForService('tickets');
    load.phase = 'after';
    await probeAll(load);
    await sleep(1_000);
    await load.stop();
    assertContract(load, faults);

    // Every acknowledged ticket is there once, under its number; nothing else is.
    const listed = await listAll(stack, key);
    for (const [k, id] of load.creates) assert.ok(listed.has(id), `ticket ${id} of key ${k}`);
    assert.equal(listed.size, load.creates.size, 'tickets = keys that got a 201');
    // Events = tickets: one created event per ticket, once the relay caught up.
    const eventsFile = join(disk.dir, 'events', 'tickets.jsonl');
    let created = new Map<number, number>();
    await waitFor(
      async () => (created = createdEvents(eventsFile)).size >= listed.size,
      RESUME_WITHIN_MS,
      () => `${created.size} created events for ${listed.size} tickets`,
    );
    assert.deepEqual(
      [...created].filter(([, n]) => n !== 1),
      [],
      'tickets with more than one created event',
    );
    assert.equal(created.size, listed.size, 'events = tickets');
    for (const p of [...stack.upstreams.values(), ...stack.gateways])
      assert.ok(p.running, `${p.name} stopped:\n${p.logs().slice(-2000)}`);
    console.log(
      `disk faults (embedded): ${load.summary()}, tickets ${listed.size}, events ${created.size}, ` +
        `${((Date.now() - t0) / 1000).toFixed(0)} s`,
    );
  });

  it('when MariaDB’s datadir and then NATS’s store fill to the last byte under load, then requests get 503 with Retry-After, nothing acknowledged is lost or doubled, events = tickets, and every operation works again within 10 s of freeing', async () => {
    const t0 = Date.now();
    const dir = mkdtempSync(join(tmpdir(), 'disk-backends-'));
    cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
    // InnoDB's redo log alone is 96 MiB: the datadir gets 256 MiB, NATS's store 64 MiB.
    const mysqlDisk = SmallDisk.mount(join(dir, 'mysql', 'data'), 256);
    const natsDisk = SmallDisk.mount(join(dir, 'nats', 'nats'), 64);
    cleanups.push(
      () => mysqlDisk.unmount(),
      () => natsDisk.unmount(),
    );
    const [mysql, nats] = await Promise.all([
      startMariaDb(join(dir, 'mysql')),
      startNats(join(dir, 'nats')),
    ]);
    cleanups.push(async () => {
      await Promise.allSettled([mysql.stop(), nats.stop()]);
    });
    mkdirSync(join(dir, 'stack'));
    const stack = await new Stack({
      dir: join(dir, 'stack'),
      mysqlUrl: mysql.url,
      redisUrl: requireEnv('TEST_REDIS_URL'),
      natsUrl: nats.url,
      env: FAULT_ENV,
    }).start();
    cleanups.push(() => stack.stop());
    const key = await faultOrg(stack, ORG, {
      rate_limit_per_key_per_min: 1_000_000,
      rate_limit_per_org_per_min: 1_000_000,
    });
    const load = steadyLoad(stack, key);
    load.start();
    cleanups.push(() => load.stop());
    await waitFor(
      async () => load.creates.size >= 20,
      30_000,
      () => 'no tickets created',
    );

    const faults = [await fillAndFree(load, mysqlDisk, 'MariaDB datadir full')];
    load.phase = 'after';
    await sleep(1_000);
    assertContract(load, faults);

    const rows = await queryRows<{ idempotency_key: string; n: number; id: number }>(
      mysql.url,
      'SELECT idempotency_key, COUNT(*) AS n, MIN(number) AS id FROM tickets WHERE org_id = ? GROUP BY idempotency_key',
      [ORG],
    );
    const byKey = new Map(rows.map((r) => [r.idempotency_key, r]));
    assert.deepEqual(
      rows.filter((r) => Number(r.n) !== 1),
      [],
      'keys with two tickets',
    );
    for (const [k, id] of load.creates)
      assert.equal(Number(byKey.get(k)?.id), id, `ticket of ${k}`);
    assert.equal(rows.length, load.creates.size, 'tickets = keys that got a 201');
    // Events = tickets: the digest counts each ticket once.
    // One statement, one snapshot: events still arrive while the load runs.
    const counted = async () => {
      const [c] = await queryRows<{ t: number; w: number | null }>(
        mysql.url,
        `SELECT (SELECT COUNT(*) FROM digest_tickets WHERE org_id = ?) AS t,
                (SELECT SUM(ticket_count) FROM digest_weeks WHERE org_id = ?) AS w`,
        [ORG, ORG],
      );
      return { tickets: Number(c!.t), weeks: Number(c!.w ?? 0) };
    };
    let counts = await counted();
    await waitFor(
      async () => (counts = await counted()).weeks >= rows.length,
      60_000,
      () => `digest counted ${JSON.stringify(counts)} of ${rows.length}`,
    );
    await waitForConsumer(nats.url, 'digest-aggregator', 30_000);
    // The load still runs, so tickets keep arriving: every ticket of the snapshot is counted,
    // none twice (the weeks' sums never exceed the distinct tickets), and none the store lacks.
    counts = await counted();
    const [stored] = await queryRows<{ n: number }>(
      mysql.url,
      'SELECT COUNT(*) AS n FROM tickets WHERE org_id = ?',
      [ORG],
    );
    // (A ticket whose later event came first is known before it is counted: weeks ≤ tickets.)
    assert.ok(counts.weeks <= counts.tickets, `weeks count ${counts.weeks} > ${counts.tickets}`);
    assert.ok(counts.weeks >= rows.length, `digest counted ${counts.weeks} of ${rows.length}`);
    assert.ok(
      counts.tickets <= Number(stored!.n),
      `digest counted ${counts.tickets} > ${stored!.n}`,
    );

    // NATS's store full: requests keep the contract (events wait in the outbox) and work again
    // at once; JetStream is back after the supervisor's restart, and the outbox's events with it.
    faults.push(await fillAndFree(load, natsDisk, 'NATS store full', false));
    const e0 = Date.now();
    const supervisor = natsSupervisor(nats);
    cleanups.push(() => supervisor.stop());
    const probeKey = `disk-probe-${Date.now()}`;
    const probeId = await createWithKey(stack, key, probeKey);
    load.creates.set(probeKey, probeId);
    await waitFor(
      async () =>
        (
          await queryRows(
            mysql.url,
            'SELECT 1 FROM digest_tickets WHERE org_id = ? AND ticket_id = ?',
            [ORG, probeId],
          )
        ).length > 0,
      EVENTS_WITHIN_MS,
      () =>
        `no event reached the digest within ${EVENTS_WITHIN_MS / 1000} s of freeing NATS's store`,
    );
    const flowingMs = Date.now() - e0;
    await supervisor.stop();
    await load.stop();
    assertContract(load, faults);
    for (const p of [...stack.upstreams.values(), ...stack.gateways])
      assert.ok(p.running, `${p.name} stopped:\n${p.logs().slice(-2000)}`);
    // With the load stopped, events = tickets: the digest counts every stored ticket once.
    const [all] = await queryRows<{ n: number }>(
      mysql.url,
      'SELECT COUNT(*) AS n FROM tickets WHERE org_id = ?',
      [ORG],
    );
    await waitFor(
      async () => (counts = await counted()).weeks >= Number(all!.n),
      30_000,
      () => `digest counted ${JSON.stringify(counts)} of ${all!.n}`,
    );
    await waitForConsumer(nats.url, 'digest-aggregator', 30_000);
    assert.deepEqual(await counted(), { tickets: Number(all!.n), weeks: Number(all!.n) });
    console.log(
      `disk faults (MariaDB, NATS): ${load.summary()}, tickets ${all!.n}, events counted ` +
        `${counts.weeks}; after the NATS store was freed, the supervisor restarted NATS ` +
        `${supervisor.restarts} time(s) and events reached the digest ${flowingMs} ms after ` +
        `freeing; ${((Date.now() - t0) / 1000).toFixed(0)} s`,
    );
  });
});

/**
 * What a deployment's liveness probe does for NATS (deploy/k8s: `/healthz?js-enabled-only=true`
 * on nats 2.10): every PROBE_EVERY_MS it asks JetStream's API for its account info; after
 * PROBE_FAILURES answers missing or refused in a row it restarts the server on the same data.
 */
function natsSupervisor(nats: NatsHandle): { stop(): Promise<void>; restarts: number } {
  let stopped = false;
  const state = { restarts: 0 };
  const loop = (async () => {
    const nc = await connect({
      servers: nats.url,
      maxReconnectAttempts: -1,
      reconnectTimeWait: 250,
    });
    let failures = 0;
    try {
      while (!stopped) {
        try {
          await nc.request('$JS.API.INFO', Empty, { timeout: PROBE_TIMEOUT_MS });
          failures = 0;
        } catch {
          failures++;
        }
        if (failures >= PROBE_FAILURES && !stopped) {
          await nats.restart();
          state.restarts++;
          failures = 0;
        }
        await sleep(PROBE_EVERY_MS);
      }
    } finally {
      await nc.close();
    }
  })();
  return {
    get restarts() {
      return state.restarts;
    },
    async stop() {
      stopped = true;
      await loop;
    },
  };
}

/** The numbers of every ticket of the organization, through the API. */
async function listAll(stack: Stack, key: string): Promise<Set<number>> {
  const out = new Set<number>();
  let cursor: string | null = null;
  do {
    const q: string = cursor ? `&cursor=${encodeURIComponent(cursor)}` : '';
    const res = await fetch(`${stack.baseUrl()}/api/v1/agent/tickets?limit=20${q}`, {
      headers: { authorization: `Bearer ${key}` },
    });
    assert.equal(res.status, 200);
    const page = (await res.json()) as {
      tickets: Array<{ id: number }>;
      next_cursor: string | null;
    };
    for (const t of page.tickets) {
      assert.ok(!out.has(t.id), `ticket ${t.id} listed twice`);
      out.add(t.id);
    }
    cursor = page.next_cursor;
  } while (cursor);
  return out;
}

/** Ticket number → how many tickets.created events of ORG the embedded event file holds. */
function createdEvents(file: string): Map<number, number> {
  const counts = new Map<number, number>();
  if (!existsSync(file)) return counts;
  for (const line of readFileSync(file, 'utf8').split('\n')) {
    if (!line) continue;
    const e = JSON.parse(line) as {
      type: string;
      org_id: string;
      ticket_number?: number;
      ticket_id: number;
    };
    if (e.type !== 'tickets.created' || e.org_id !== ORG) continue;
    const n = e.ticket_number ?? e.ticket_id;
    counts.set(n, (counts.get(n) ?? 0) + 1);
  }
  return counts;
}

async function createWithKey(stack: Stack, key: string, idempotencyKey: string): Promise<number> {
  const t0 = Date.now();
  for (;;) {
    const res = await fetch(`${stack.baseUrl()}/api/v1/agent/tickets`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${key}`,
        'content-type': 'application/json',
        'idempotency-key': idempotencyKey,
      },
      body: JSON.stringify({ content: `disk probe ${idempotencyKey}` }),
    });
    if (res.status === 201) return ((await res.json()) as { ticket_id: number }).ticket_id;
    if (Date.now() - t0 > RESUME_WITHIN_MS) throw new Error(`create: ${res.status}`);
    await sleep(100);
  }
}
