// The outbox: every change reaches JetStream exactly once, whether NATS is up, down
// during creation, or down when the service starts. Uses its own NATS server so it
// can stop and restart it.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import mysql from 'mysql2/promise';
import { connect } from 'nats';
import { freePort, startNats, type NatsHandle } from '../../../test/support/backends.js';
import { MysqlTicketRepository } from '../src/data-access/mysql/ticket-repository.js';
import { createTestDatabase } from '../../../test/support/mysql.js';
import {
  eventually,
  newOrg,
  readStream,
  requireEnv,
  startService,
  testLogger,
  type StreamEvent,
} from './helpers.js';

/** Waits until the org has `n` events on the stream, then checks no more arrive. */
async function expectExactly(
  natsUrl: string,
  orgId: string,
  n: number,
  timeoutMs = 20_000,
): Promise<StreamEvent[]> {
  await eventually(
    async () => ((await readStream(natsUrl, orgId)).length >= n ? true : undefined),
    timeoutMs,
    `${n} events for ${orgId}`,
  );
  // A duplicate would come from the same relay pass: give it time to show.
  await new Promise((r) => setTimeout(r, 500));
  const events = await readStream(natsUrl, orgId);
  assert.equal(events.length, n, `expected exactly ${n} events, found ${events.length}`);
  assert.equal(new Set(events.map((e) => e.event.id)).size, n, 'no event id twice');
  for (const e of events) {
    assert.equal(e.subject, e.event.type);
    assert.equal(e.msgId, e.event.id, 'Nats-Msg-Id is the event id');
  }
  return events;
}

describe('outbox relay to JetStream', () => {
  let db: Awaited<ReturnType<typeof createTestDatabase>>;
  let dbConn: mysql.Connection;
  const dirs: string[] = [];
  let nats: NatsHandle;
  let service: Awaited<ReturnType<typeof startService>>;
  let env: Record<string, string>;

  const unpublished = async () => {
    const [rows] = await dbConn.query(
      'SELECT COUNT(*) AS n FROM tickets_outbox WHERE published_at IS NULL',
    );
    return Number((rows as Array<{ n: number }>)[0]!.n);
  };

  before(async () => {
    db = await createTestDatabase('tickets_outbox');
    dbConn = await mysql.createConnection({ uri: db.url });
    const natsDir = mkdtempSync(join(tmpdir(), 'tickets-nats-'));
    dirs.push(natsDir);
    nats = await startNats(natsDir);
    env = { MYSQL_URL: db.url, REDIS_URL: requireEnv('TEST_REDIS_URL'), NATS_URL: nats.url };
    service = await startService(env);
  });

  after(async () => {
    await service?.stop();
    await nats?.stop();
    await dbConn?.end();
    await db?.drop();
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  });

  it('when the service starts, then stream TICKETS exists with subjects tickets.>, file storage and a 2-minute duplicate window', async () => {
    const orgId = newOrg();
    await service.client.createTicket({ orgId, content: 'first' });
    await expectExactly(nats.url, orgId, 1);
    const nc = await connect({ servers: nats.url });
    try {
      const info = await (await nc.jetstreamManager()).streams.info('TICKETS');
      assert.deepEqual(info.config.subjects, ['tickets.>']);
      assert.equal(info.config.storage, 'file');
      assert.equal(info.config.duplicate_window, 120 * 1e9);
    } finally {
      await nc.close();
    }
  });

  it('when NATS is down while tickets are created, then creating succeeds and every event reaches the stream exactly once after NATS returns', async () => {
    const orgId = newOrg();
    const ids: number[] = [];
    for (let i = 0; i < 3; i++)
      ids.push((await service.client.createTicket({ orgId, content: `before ${i}` })).ticketId);
    await expectExactly(nats.url, orgId, 3);

    await nats.stop();
    const started = Date.now();
    for (let i = 0; i < 5; i++)
      ids.push((await service.client.createTicket({ orgId, content: `during ${i}` })).ticketId);
    const { ticket } = await service.client.getTicket({ orgId, ticketId: ids[3]! });
    await service.client.updateTicketStatus({ orgId, ticketId: ticket!.id, status: 'in_progress' });
    assert.ok(Date.now() - started < 5_000, 'creating did not wait for NATS');
    assert.ok((await unpublished()) >= 6, 'events wait in the outbox');

    await nats.restart();
    const events = await expectExactly(nats.url, orgId, 9);
    const created = events.filter((e) => e.event.type === 'tickets.created');
    assert.deepEqual(
      created.map((e) => e.event.ticket_number!).sort((a, b) => a - b),
      [...ids].sort((a, b) => a - b),
    );
    assert.equal(events.filter((e) => e.event.type === 'tickets.status_changed').length, 1);
    await eventually(
      async () => ((await unpublished()) === 0 ? true : undefined),
      5_000,
      'outbox drained',
    );
  });

  it('when the relay publishes an event again (crash before marking it), then JetStream keeps one copy', async () => {
    const orgId = newOrg();
    for (let i = 0; i < 4; i++) await service.client.createTicket({ orgId, content: `re ${i}` });
    await expectExactly(nats.url, orgId, 4);
    await eventually(
      async () => ((await unpublished()) === 0 ? true : undefined),
      5_000,
      'outbox drained',
    );
    // Forget that they were published, as if the relay died between PubAck and commit.
    // The relay also polls on its own, so it may publish them again before the next line
    // runs: what the UPDATE changed is the deterministic check.
    const [forgotten] = await dbConn.query(
      'UPDATE tickets_outbox SET published_at = NULL WHERE payload LIKE CONCAT(\'%"org_id":"\', ?, \'"%\')',
      [orgId],
    );
    assert.equal((forgotten as { affectedRows: number }).affectedRows, 4);
    await service.client.createTicket({ orgId, content: 'wake the relay' });
    await eventually(
      async () => ((await unpublished()) === 0 ? true : undefined),
      5_000,
      'republished',
    );
    await expectExactly(nats.url, orgId, 5);
  });

  it('when published events are older than the retention, then the purge deletes them and nothing else', async () => {
    const orgId = newOrg();
    for (let i = 0; i < 3; i++) await service.client.createTicket({ orgId, content: `old ${i}` });
    await expectExactly(nats.url, orgId, 3);
    await eventually(
      async () => ((await unpublished()) === 0 ? true : undefined),
      5_000,
      'outbox drained',
    );
    const [countRows] = await dbConn.query('SELECT COUNT(*) AS n FROM tickets_outbox');
    const total = Number((countRows as Array<{ n: number }>)[0]!.n);
    await dbConn.query(
      'UPDATE tickets_outbox SET published_at = NOW(3) - INTERVAL 2 DAY ORDER BY id DESC LIMIT 2',
    );
    await dbConn.query(
      "INSERT INTO tickets_outbox (event_id, subject, payload, created_at) VALUES (UUID(), 'tickets.created', '{}', NOW(3) - INTERVAL 3 DAY)",
    );
    const repo = await MysqlTicketRepository.open(db.url, testLogger);
    try {
      assert.equal(await repo.purgePublished(new Date(Date.now() - 24 * 3600 * 1000)), 2);
    } finally {
      await repo.close();
    }
    const [after] = await dbConn.query('SELECT COUNT(*) AS n FROM tickets_outbox');
    assert.equal(
      Number((after as Array<{ n: number }>)[0]!.n),
      total - 2 + 1,
      'unpublished rows are never purged',
    );
    // The relay publishes the hand-made row; it must not linger for the next tests.
    await eventually(
      async () => ((await unpublished()) === 0 ? true : undefined),
      5_000,
      'outbox drained',
    );
  });

  it('when two replicas relay the same outbox, then each event is on the stream once', async () => {
    const replica = await startService(env);
    try {
      const orgId = newOrg();
      await Promise.all(
        Array.from({ length: 40 }, (_, i) =>
          (i % 2 ? replica.client : service.client).createTicket({ orgId, content: `pair ${i}` }),
        ),
      );
      await expectExactly(nats.url, orgId, 40);
    } finally {
      await replica.stop();
    }
  });

  it('when NATS is unreachable at start, then the service starts, creates tickets, and publishes them once NATS comes up', async () => {
    const port = await freePort();
    const lateDir = mkdtempSync(join(tmpdir(), 'tickets-nats-late-'));
    dirs.push(lateDir);
    const lateDb = await createTestDatabase('tickets_late');
    const late = await startService({
      ...env,
      MYSQL_URL: lateDb.url,
      NATS_URL: `nats://127.0.0.1:${port}`,
    });
    let lateNats: NatsHandle | undefined;
    try {
      const orgId = newOrg();
      for (let i = 0; i < 3; i++) await late.client.createTicket({ orgId, content: `early ${i}` });
      lateNats = await startNats(lateDir, { port });
      await expectExactly(lateNats.url, orgId, 3);
    } finally {
      await late.stop();
      await lateNats?.stop();
      await lateDb.drop();
    }
  });

  it('when the service stops while NATS is down, then it stops promptly and the events stay for the next start', async () => {
    const orgId = newOrg();
    await nats.stop();
    try {
      await service.client.createTicket({ orgId, content: 'left behind' });
      const t0 = Date.now();
      await service.stop();
      assert.ok(Date.now() - t0 < 8_000, `stop took ${Date.now() - t0} ms`);
      assert.ok((await unpublished()) >= 1);
    } finally {
      await nats.restart();
    }
    service = await startService(env);
    await expectExactly(nats.url, orgId, 1);
  });
});
