// Creates that arrive together share one transaction (data-access/mysql/batched-creates.ts):
// each call still gets its own answer, one ticket per idempotency key, one event per created
// ticket, and a transaction that dies half-way leaves nothing behind.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import mysql from 'mysql2/promise';
import { MysqlTicketRepository } from '../src/data-access/mysql/ticket-repository.js';
import { SharedTransactions } from '../src/data-access/mysql/shared-transactions.js';
import { ticketCreated, ticketStatusChanged } from '../src/domain/events.js';
import type { InsertOutcome } from '../src/domain/ports.js';
import { openedTicket, type TicketDraft } from '../src/domain/ticket.js';
import { createTestDatabase } from '../../../test/support/mysql.js';
import {
  assertAppError,
  eventually,
  newOrg,
  readStream,
  requireEnv,
  startService,
  testLogger,
} from './helpers.js';
import { stopAll } from '../../../test/support/testing.js';

describe('shared transactions (the queue)', () => {
  it('when calls arrive in one turn of the event loop, or while two batches are in flight, then they go as batches, each answered in order; a failed batch fails only its own calls', async () => {
    const batches: number[][] = [];
    const releases: Array<() => void> = [];
    const queue = new SharedTransactions<number, string>(async (requests) => {
      batches.push(requests);
      await new Promise<void>((resolve) => releases.push(resolve));
      if (requests.includes(16)) throw new Error('batch failed');
      return requests.map((n) => (n === 7 ? { error: new Error('seven') } : { outcome: `#${n}` }));
    }, 5);
    const turn = () => new Promise((r) => setImmediate(r));
    const calls = Array.from({ length: 14 }, (_, n) => queue.submit(n));
    // Nothing starts before the turn ends; then the turn's calls fill both slots.
    assert.deepEqual(batches, []);
    await turn();
    assert.deepEqual(batches, [
      [0, 1, 2, 3, 4],
      [5, 6, 7, 8, 9],
    ]);
    // Calls made while both slots are busy wait for one to free up.
    calls.push(...[14, 15, 16].map((n) => queue.submit(n)));
    const settled = Promise.allSettled(calls);
    await turn();
    assert.equal(batches.length, 2);
    while (batches.length < 4) {
      releases.shift()!();
      await turn();
    }
    releases.forEach((release) => release());
    const results = await settled;
    assert.deepEqual(batches, [
      [0, 1, 2, 3, 4],
      [5, 6, 7, 8, 9],
      [10, 11, 12, 13, 14],
      [15, 16],
    ]);
    results.forEach((r, n) => {
      if (n === 7) assert.equal(r.status === 'rejected' && (r.reason as Error).message, 'seven');
      else if (n >= 15)
        assert.equal(r.status === 'rejected' && (r.reason as Error).message, 'batch failed');
      else assert.deepEqual(r, { status: 'fulfilled', value: `#${n}` });
    });
  });
});

function draft(orgId: string, content: string, idempotencyKey: string | null = null): TicketDraft {
  return openedTicket({ orgId, content, authorName: null, idempotencyKey }, new Date());
}

describe('MySQL creates in shared transactions', () => {
  let db: Awaited<ReturnType<typeof createTestDatabase>>;
  let repo: MysqlTicketRepository;
  let otherReplica: MysqlTicketRepository;
  let conn: mysql.Connection;

  before(async () => {
    db = await createTestDatabase('tickets_group');
    repo = await MysqlTicketRepository.open(db.url, testLogger, { poolSize: 4 });
    otherReplica = await MysqlTicketRepository.open(db.url, testLogger, { poolSize: 1 });
    conn = await mysql.createConnection({ uri: db.url });
  });
  after(async () => {
    await conn?.end();
    await repo?.close();
    await otherReplica?.close();
    await db?.drop();
  });

  const counts = async (orgId: string) => {
    const [rows] = await conn.query(
      `SELECT (SELECT COUNT(*) FROM tickets WHERE org_id = ?) AS t,
              (SELECT COUNT(*) FROM tickets_outbox WHERE JSON_VALUE(payload, '$.org_id') = ?) AS o`,
      [orgId, orgId],
    );
    const r = (rows as Array<{ t: number; o: number }>)[0]!;
    return { tickets: Number(r.t), outbox: Number(r.o) };
  };

  it('when creates with new keys, a key repeated in the group, a key another replica holds and no key arrive together, then each gets its own answer and one ticket and event per created ticket', async () => {
    const orgId = newOrg();
    const held = await otherReplica.insert(draft(orgId, 'elsewhere', 'held'), (t) => [
      ticketCreated(t),
    ]);
    assert.equal(held.kind, 'created');
    if (held.kind !== 'created') return;
    // Calls 0 and 1 open the two slots; 2..21 arrive meanwhile and share one transaction.
    const keys = [
      null,
      null,
      'new-a',
      'held',
      'twice',
      null,
      'twice',
      'new-b',
      'held',
      ...Array.from({ length: 13 }, (_, i) => (i % 2 === 0 ? `k-${i}` : null)),
    ];
    const outcomes = await Promise.all(
      keys.map((key, i) =>
        repo.insert(draft(orgId, `body ${i}`, key), (t) =>
          // One create with two events: their outbox rows keep that order.
          i === 5
            ? [ticketCreated(t), ticketStatusChanged(t, 'open', 'in_progress')]
            : [ticketCreated(t)],
        ),
      ),
    );
    const created = (o: InsertOutcome) => (o.kind === 'created' ? o.ticket.id : undefined);
    assert.deepEqual(outcomes[3], { kind: 'duplicate', ticketId: held.ticket.id });
    assert.deepEqual(outcomes[8], { kind: 'duplicate', ticketId: held.ticket.id });
    assert.ok(created(outcomes[4]!));
    assert.deepEqual(outcomes[6], { kind: 'duplicate', ticketId: created(outcomes[4]!) });
    const createdIds = outcomes.map(created).filter((id) => id !== undefined);
    assert.equal(createdIds.length, keys.length - 3);
    assert.equal(new Set(createdIds).size, createdIds.length);
    outcomes.forEach((o, i) => {
      if (o.kind === 'created') {
        assert.equal(o.ticket.content, `body ${i}`);
        assert.equal(o.ticket.idempotencyKey, keys[i]);
      }
    });
    // The other replica's ticket plus the created ones; one event each, two for call 5.
    assert.deepEqual(await counts(orgId), {
      tickets: createdIds.length + 1,
      outbox: createdIds.length + 2,
    });
    // Numbers 1..n in the org: the other replica's first, then one per created ticket.
    assert.deepEqual(
      [held.ticket.id, ...createdIds].sort((a, b) => a - b),
      Array.from({ length: createdIds.length + 1 }, (_, i) => i + 1),
    );
    const [rows] = await conn.query(
      `SELECT JSON_VALUE(payload, '$.ticket_id') AS ticket_id,
              JSON_VALUE(payload, '$.ticket_number') AS ticket_number,
              JSON_VALUE(payload, '$.type') AS type, JSON_VALUE(payload, '$.data.content') AS content
       FROM tickets_outbox WHERE JSON_VALUE(payload, '$.org_id') = ? ORDER BY id`,
      [orgId],
    );
    const events = rows as Array<{
      ticket_id: string;
      ticket_number: string;
      type: string;
      content: string | null;
    }>;
    outcomes.forEach((o, i) => {
      if (o.kind !== 'created') return;
      const own = events.filter((e) => Number(e.ticket_number) === o.ticket.id);
      for (const e of own) assert.equal(Number(e.ticket_id), o.ticket.globalId);
      assert.deepEqual(
        own.map((e) => e.type),
        i === 5 ? ['tickets.created', 'tickets.status_changed'] : ['tickets.created'],
      );
      assert.equal(own[0]!.content, `body ${i}`);
    });
  });

  it('when a shared transaction is chosen as a deadlock victim, then it runs again and every create is answered once, with no ticket or event doubled', async () => {
    const orgId = newOrg();
    const other = await mysql.createConnection({ uri: db.url });
    const deadlocks = async () => {
      const [rows] = await conn.query("SHOW GLOBAL STATUS LIKE 'Innodb_deadlocks'");
      return Number((rows as Array<{ Value: string }>)[0]!.Value);
    };
    const deadlocksBefore = await deadlocks();
    try {
      // Another writer's transaction, heavier than the batch, so InnoDB rolls the batch back. It
      // numbers its tickets itself, far above the batch's, so only the keys are contended.
      await other.query('START TRANSACTION');
      const filler = Array.from({ length: 300 }, (_, i) => [
        `${orgId}-filler`,
        i + 1,
        `filler ${i}`,
        'open',
        'medium',
        new Date(),
        new Date(),
      ]);
      await other.query(
        'INSERT INTO tickets (org_id, number, content, status, priority, created_at, updated_at) VALUES ?',
        [filler],
      );
      const insertKey = (key: string) =>
        other.query(
          `INSERT INTO tickets (org_id, number, content, idempotency_key, status, priority, created_at, updated_at)
           VALUES (?, ?, 'other writer', ?, 'open', 'medium', NOW(3), NOW(3))`,
          [orgId, 1_000_000 + key.length, key],
        );
      await insertKey('late');
      // Calls 0 and 1 open the two slots; 2..11 share a transaction that takes 'early' and then
      // waits for 'late', which the other writer holds.
      const keys = [null, null, 'early', null, 'k-a', 'late', null, 'k-b', null, null, 'k-c', null];
      const calls = keys.map((key, i) =>
        repo.insert(draft(orgId, `locked ${i}`, key), (t) => [ticketCreated(t)]),
      );
      await eventually(
        async () => {
          const [rows] = await conn.query(
            // The batch's statement for 'late' (the driver sends values inlined), still running.
            `SELECT COUNT(*) AS n FROM information_schema.PROCESSLIST
             WHERE DB = DATABASE() AND INFO LIKE 'INSERT INTO tickets%' AND INFO LIKE ?`,
            [`%'${orgId}', @n0 + %, 'locked 5', NULL, 'late'%`],
          );
          return Number((rows as Array<{ n: number }>)[0]!.n) > 0 ? true : undefined;
        },
        5_000,
        'the batch waiting for the other writer',
      );
      // The other writer now wants 'early', which the batch holds: a deadlock.
      await insertKey('early');
      await other.query('COMMIT');
      const outcomes = await Promise.all(calls);
      assert.ok((await deadlocks()) > deadlocksBefore, 'InnoDB reported the deadlock');
      const [held] = await conn.query(
        'SELECT number, idempotency_key AS k FROM tickets WHERE org_id = ? AND idempotency_key IS NOT NULL',
        [orgId],
      );
      const byKey = new Map(
        (held as Array<{ number: number; k: string }>).map((r) => [r.k, Number(r.number)]),
      );
      assert.deepEqual(outcomes[2], { kind: 'duplicate', ticketId: byKey.get('early') });
      assert.deepEqual(outcomes[5], { kind: 'duplicate', ticketId: byKey.get('late') });
      const created = outcomes.flatMap((o) => (o.kind === 'created' ? [o.ticket.id] : []));
      assert.equal(created.length, keys.length - 2);
      // The rolled-back attempt gave its numbers back: the org's are 1..n, no gap.
      assert.deepEqual(
        created.sort((a, b) => a - b),
        Array.from({ length: created.length }, (_, i) => i + 1),
      );
      // The other writer's two keyed tickets (no events) and one ticket and event per created one.
      assert.deepEqual(await counts(orgId), {
        tickets: created.length + 2,
        outbox: created.length,
      });
      const [contents] = await conn.query(
        'SELECT COUNT(DISTINCT content) AS n FROM tickets WHERE org_id = ? AND content LIKE ?',
        [orgId, 'locked %'],
      );
      assert.equal(Number((contents as Array<{ n: number }>)[0]!.n), created.length);
    } finally {
      await other.end();
    }
  });

  it('when a shared transaction dies between its statements (its connection killed while its outbox insert waits), then every create of it fails and nothing of it is written', async () => {
    const orgId = newOrg();
    const locker = await mysql.createConnection({ uri: db.url });
    const observer = await mysql.createConnection({ uri: db.url });
    try {
      await observer.query('SET SESSION TRANSACTION ISOLATION LEVEL READ UNCOMMITTED');
      await locker.query('LOCK TABLES tickets_outbox WRITE');
      const calls = Array.from({ length: 12 }, (_, i) =>
        repo.insert(draft(orgId, `doomed ${i}`, i % 2 ? `d-${i}` : null), (t) => [
          ticketCreated(t),
        ]),
      );
      const settled = Promise.allSettled(calls);
      let done = false;
      void settled.then(() => (done = true));
      let mostHalfWritten = 0;
      while (!done) {
        // Transactions that wrote their tickets and now wait for the outbox: count what they
        // wrote (uncommitted), then kill them, as a crash of the process would.
        const [waiting] = await observer.query(
          `SELECT ID FROM information_schema.PROCESSLIST
           WHERE DB = DATABASE() AND STATE LIKE 'Waiting for table metadata lock'`,
        );
        const ids = (waiting as Array<{ ID: number }>).map((w) => w.ID);
        if (ids.length > 0) {
          const [dirty] = await observer.query(
            'SELECT COUNT(*) AS n FROM tickets WHERE org_id = ?',
            [orgId],
          );
          mostHalfWritten = Math.max(
            mostHalfWritten,
            Number((dirty as Array<{ n: number }>)[0]!.n),
          );
          for (const id of ids)
            await observer.query('KILL CONNECTION ?', [id]).catch(() => undefined);
        }
        await new Promise((r) => setTimeout(r, 20));
      }
      const results = await settled;
      assert.ok(
        mostHalfWritten >= 10,
        `a group had written ${mostHalfWritten} tickets when killed`,
      );
      for (const r of results) assert.equal(r.status, 'rejected');
      await locker.query('UNLOCK TABLES');
      assert.deepEqual(await counts(orgId), { tickets: 0, outbox: 0 });
      // The pool replaced the killed connections: the same creates now go through, once each.
      const again = await Promise.all(
        Array.from({ length: 12 }, (_, i) =>
          repo.insert(draft(orgId, `again ${i}`, i % 2 ? `d-${i}` : null), (t) => [
            ticketCreated(t),
          ]),
        ),
      );
      assert.ok(again.every((o) => o.kind === 'created'));
      assert.deepEqual(await counts(orgId), { tickets: 12, outbox: 12 });
      // The killed transactions took no numbers with them: 1..12, none skipped.
      assert.deepEqual(
        again.map((o) => (o.kind === 'created' ? o.ticket.id : 0)).sort((a, b) => a - b),
        Array.from({ length: 12 }, (_, i) => i + 1),
      );
    } finally {
      await locker.query('UNLOCK TABLES').catch(() => undefined);
      await locker.end();
      await observer.end();
    }
  });
});

describe('CreateTicket calls arriving together (MySQL, Redis, JetStream)', () => {
  let db: Awaited<ReturnType<typeof createTestDatabase>>;
  let service: Awaited<ReturnType<typeof startService>>;
  const natsUrl = () => requireEnv('TEST_NATS_URL');

  before(async () => {
    db = await createTestDatabase('tickets_group_svc');
    service = await startService({
      MYSQL_URL: db.url,
      REDIS_URL: requireEnv('TEST_REDIS_URL'),
      NATS_URL: natsUrl(),
    });
  });
  after(() => stopAll(service, db));

  it('when valid, invalid, repeated-key and replayed creates arrive together, then only the invalid one fails, each key holds one ticket and each created ticket has one event', async () => {
    const orgId = newOrg();
    const { client } = service;
    const first = await client.createTicket({ orgId, content: 'earlier', idempotencyKey: 'old' });
    const bodies = Array.from({ length: 30 }, (_, i) => ({
      orgId,
      content: i === 11 ? 'x'.repeat(4001) : `together ${i}`,
      idempotencyKey: i % 3 === 0 ? `new-${i}` : i % 3 === 1 ? 'same' : i === 5 ? 'old' : undefined,
    }));
    const results = await Promise.allSettled(bodies.map((b) => client.createTicket(b)));
    await assertAppError(
      Promise.reject((results[11] as PromiseRejectedResult).reason),
      'invalid_request',
      'content',
    );
    const ok = results.flatMap((r, i) => (r.status === 'fulfilled' ? [{ i, ...r.value }] : []));
    assert.equal(ok.length, 29);
    assert.deepEqual(
      ok.filter((r) => r.i === 5).map(({ ticketId, duplicate }) => ({ ticketId, duplicate })),
      [{ ticketId: first.ticketId, duplicate: true }],
    );
    const same = ok.filter((r) => bodies[r.i]!.idempotencyKey === 'same');
    assert.equal(new Set(same.map((r) => r.ticketId)).size, 1);
    assert.equal(same.filter((r) => !r.duplicate).length, 1);
    const createdIds = ok.filter((r) => !r.duplicate).map((r) => r.ticketId);
    // new-0..new-27 (10), one for 'same', the keyless ones but 5 and the invalid 11 (8).
    assert.equal(createdIds.length, 19);
    const events = await eventually(
      async () => {
        const e = await readStream(natsUrl(), orgId);
        return e.length >= 20 ? e : undefined;
      },
      10_000,
      'twenty created events',
    );
    await new Promise((r) => setTimeout(r, 300));
    const final = await readStream(natsUrl(), orgId);
    assert.equal(final.length, events.length);
    assert.deepEqual(
      final.map((m) => m.event.ticket_number!).sort((a, b) => a - b),
      [first.ticketId, ...createdIds].sort((a, b) => a - b),
    );
  });
});
