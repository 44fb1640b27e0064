// The move from one id counter for every organization to numbers per organization, on a
// database the earlier version made and filled: what clients hold (ticket ids, idempotency
// keys, cursors) keeps working, each organization's next ticket continues above its highest
// id, events already in the outbox still go out, and a migration cut off at any step finishes
// at the next start. Real MariaDB, Redis and NATS.
import assert from 'node:assert/strict';
import { randomBytes, randomUUID } from 'node:crypto';
import { after, describe, it } from 'node:test';
import mysql from 'mysql2/promise';
import { parseTicketEvent } from '@support-agent/events';
import { runMigrations, type MigrationSet } from '@support-agent/shared';
import { SCHEMA } from '../src/data-access/mysql/migrations.js';
import { CursorCodec } from '../src/domain/cursor.js';
import { createTestDatabase } from '../../../test/support/mysql.js';
import { stopAll } from '../../../test/support/testing.js';
import {
  assertAppError,
  eventually,
  newOrg,
  readStream,
  requireEnv,
  startService,
  testLogger,
} from './helpers.js';

const NUMBERS_VERSION = 3;
const NUMBERS = SCHEMA.migrations.find((m) => m.version === NUMBERS_VERSION)!;
/** The schema of the version before numbers per organization. */
const EARLIER_SCHEMA: MigrationSet = {
  table: SCHEMA.table,
  migrations: SCHEMA.migrations.filter((m) => m.version < NUMBERS_VERSION),
};

interface EarlierTicket {
  id: number;
  orgId: string;
  content: string;
  createdAt: Date;
}

/**
 * A database as the earlier version left it: its schema, its cursor secret, and tickets of two
 * organizations created in turn (ids from one counter), each with its tickets.created event
 * still in the outbox, byte for byte as that version wrote it.
 */
class EarlierDatabase {
  readonly orgs = [newOrg('before-a'), newOrg('before-b')] as const;
  readonly tickets: EarlierTicket[] = [];
  readonly secret = randomBytes(32);
  private constructor(
    readonly db: Awaited<ReturnType<typeof createTestDatabase>>,
    readonly conn: mysql.Connection,
  ) {}

  static async create(): Promise<EarlierDatabase> {
    const db = await createTestDatabase('tickets_numbers');
    const pool = mysql.createPool({ uri: db.url, connectionLimit: 1 });
    try {
      await runMigrations(pool, EARLIER_SCHEMA, testLogger);
    } finally {
      await pool.end();
    }
    const earlier = new EarlierDatabase(db, await mysql.createConnection({ uri: db.url }));
    await earlier.conn.query(
      'INSERT INTO tickets_secrets (name, secret, created_at) VALUES (?, ?, NOW(3))',
      ['cursor_hmac', earlier.secret],
    );
    const [a, b] = earlier.orgs;
    // Two of a's tickets share a millisecond: the id breaks the tie, then and now.
    const start = Date.parse('2026-11-20T10:00:00.000Z');
    const plan: Array<[string, number, string | null]> = [
      [a, 0, 'a-key'],
      [b, 1, null],
      [a, 2, null],
      [a, 2, null],
      [b, 3, 'b-key'],
      [a, 4, null],
    ];
    for (const [orgId, second, key] of plan)
      await earlier.insert(orgId, start + second * 1000, key);
    return earlier;
  }

  /** One create as the earlier version wrote it: the ticket, then its event in the outbox. */
  async insert(orgId: string, atMs: number, key: string | null = null): Promise<EarlierTicket> {
    const createdAt = new Date(atMs);
    const content = `earlier ${this.tickets.length} of ${orgId}`;
    const [res] = await this.conn.query<mysql.ResultSetHeader>(
      `INSERT INTO tickets (org_id, content, author_name, idempotency_key, status, priority,
         category, ai_summary, ai_answer, created_at, updated_at)
       VALUES (?, ?, NULL, ?, 'open', 'medium', NULL, NULL, NULL, ?, ?)`,
      [orgId, content, key, createdAt, createdAt],
    );
    const ticket = { id: res.insertId, orgId, content, createdAt };
    const eventId = randomUUID();
    const at = createdAt.toISOString();
    const payload =
      `{"id":"${eventId}","type":"tickets.created","version":1,"org_id":"${orgId}",` +
      `"ticket_id":${ticket.id},"occurred_at":"${at}","data":{"content":"${content}",` +
      `"author_name":null,"status":"open","priority":"medium","category":null,"created_at":"${at}"}}`;
    await this.conn.query(
      `INSERT INTO tickets_outbox (event_id, subject, payload, created_at) VALUES (?, 'tickets.created', ?, ?)`,
      [eventId, payload, createdAt],
    );
    this.tickets.push(ticket);
    return ticket;
  }

  of(orgId: string): EarlierTicket[] {
    return this.tickets.filter((t) => t.orgId === orgId);
  }

  highest(orgId: string): number {
    return Math.max(...this.of(orgId).map((t) => t.id));
  }

  /** Runs the first `steps` steps of the numbers migration, as a start cut off after them would. */
  async migrateUntil(steps: number): Promise<void> {
    const pool = mysql.createPool({ uri: this.db.url, connectionLimit: 1 });
    try {
      await runMigrations(
        pool,
        {
          table: `cut_off_${steps}`,
          migrations: [{ ...NUMBERS, statements: NUMBERS.statements.slice(0, steps) }],
        },
        testLogger,
      );
    } finally {
      await pool.end();
    }
  }

  async counters(): Promise<Record<string, number>> {
    const [rows] = await this.conn.query<mysql.RowDataPacket[]>(
      'SELECT org_id, last_number FROM tickets_org_counters ORDER BY org_id',
    );
    return Object.fromEntries(rows.map((r) => [String(r.org_id), Number(r.last_number)]));
  }

  async close(): Promise<void> {
    await this.conn.end();
    await this.db.drop();
  }
}

const services: Array<Awaited<ReturnType<typeof startService>>> = [];
const databases: EarlierDatabase[] = [];
after(() => stopAll(...services, ...databases));

async function startOn(earlier: EarlierDatabase) {
  const service = await startService({
    MYSQL_URL: earlier.db.url,
    REDIS_URL: requireEnv('TEST_REDIS_URL'),
    NATS_URL: requireEnv('TEST_NATS_URL'),
  });
  services.push(service);
  return service;
}

async function earlierDatabase(): Promise<EarlierDatabase> {
  const earlier = await EarlierDatabase.create();
  databases.push(earlier);
  return earlier;
}

/** The checks every migrated database passes: what clients held works, new numbers continue. */
async function assertMigrated(
  earlier: EarlierDatabase,
  client: Awaited<ReturnType<typeof startService>>['client'],
): Promise<void> {
  const [a, b] = earlier.orgs;
  for (const t of earlier.tickets) {
    const { ticket } = await client.getTicket({ orgId: t.orgId, ticketId: t.id });
    assert.equal(ticket?.content, t.content, `ticket ${t.id} of ${t.orgId} keeps its id`);
  }
  await assertAppError(client.getTicket({ orgId: b, ticketId: earlier.of(a)[0]!.id }), 'not_found');
  const nextA = await client.createTicket({ orgId: a, content: 'first after the upgrade' });
  const nextB = await client.createTicket({ orgId: b, content: 'first after the upgrade' });
  assert.deepEqual(
    [nextA, nextB],
    [
      { ticketId: earlier.highest(a) + 1, duplicate: false },
      { ticketId: earlier.highest(b) + 1, duplicate: false },
    ],
  );
}

describe('ticket numbers per organization: migrating a database of the earlier version', () => {
  it('when the service starts on it, then tickets keep their ids as numbers, keys and cursors still work, and each organization continues above its highest id', async () => {
    const earlier = await earlierDatabase();
    const [a, b] = earlier.orgs;
    // A cursor the earlier version handed out: after a's third ticket (one of the tied pair).
    const aTickets = earlier.of(a);
    const held = aTickets[2]!;
    const cursor = new CursorCodec(earlier.secret).encode(
      { createdAtMs: held.createdAt.getTime(), id: held.id },
      a,
      {},
    );

    const { client } = await startOn(earlier);
    await assertMigrated(earlier, client);

    const page = await client.listTickets({ orgId: a, limit: 20, cursor });
    assert.deepEqual(
      page.tickets.map((t) => t.id),
      aTickets
        .slice(0, 2)
        .map((t) => t.id)
        .reverse(),
    );
    const all = await client.listTickets({ orgId: a, limit: 20 });
    assert.deepEqual(
      all.tickets.map((t) => t.id),
      [earlier.highest(a) + 1, ...aTickets.map((t) => t.id).reverse()],
    );
    assert.deepEqual(
      await client.createTicket({ orgId: a, content: 'x', idempotencyKey: 'a-key' }),
      {
        ticketId: aTickets[0]!.id,
        duplicate: true,
      },
    );
    await client.updateTicketStatus({
      orgId: b,
      ticketId: earlier.of(b)[0]!.id,
      status: 'in_progress',
    });
    const inProgress = await client.listTickets({ orgId: b, status: 'in_progress', limit: 20 });
    assert.deepEqual(
      inProgress.tickets.map((t) => t.id),
      [earlier.of(b)[0]!.id],
    );
    assert.deepEqual(await earlier.counters(), {
      [a]: earlier.highest(a) + 1,
      [b]: earlier.highest(b) + 1,
    });

    // The events the earlier version left in the outbox go out as they were; consumers read
    // their ticket_id as the number. New events carry both.
    const natsUrl = requireEnv('TEST_NATS_URL');
    const events = await eventually(
      async () => {
        const e = await readStream(natsUrl, a);
        return e.length >= aTickets.length + 1 ? e : undefined;
      },
      10_000,
      "a's events",
    );
    const parsed = events.map((m) => {
      const p = parseTicketEvent(JSON.stringify(m.event));
      assert.equal(p.kind, 'event');
      return p.kind === 'event' ? p.event : undefined;
    });
    assert.deepEqual(
      parsed.filter((e) => e?.type === 'tickets.created').map((e) => e?.ticket_number),
      [...aTickets.map((t) => t.id), earlier.highest(a) + 1],
    );
    for (const m of events.slice(0, aTickets.length))
      assert.equal(m.event.ticket_number, undefined);
  });

  it('when an insert is made as the earlier version made it after the migration, then it fails and writes nothing', async () => {
    const earlier = await earlierDatabase();
    await startOn(earlier);
    const count = async () => {
      const [rows] = await earlier.conn.query<mysql.RowDataPacket[]>(
        'SELECT COUNT(*) AS n FROM tickets',
      );
      return Number(rows[0]!.n);
    };
    const before = await count();
    await assert.rejects(earlier.insert(earlier.orgs[0], Date.now()), /number/);
    assert.equal(await count(), before);
  });

  for (let steps = 1; steps < NUMBERS.statements.length; steps++) {
    it(`when the migration was cut off after step ${steps} of ${NUMBERS.statements.length}, with the earlier version still writing, then the next start finishes it`, async () => {
      const earlier = await earlierDatabase();
      await earlier.migrateUntil(steps);
      // Until `number` is NOT NULL (step 4) a replica of the earlier version can still create.
      if (steps < 4) await earlier.insert(earlier.orgs[1], Date.parse('2026-11-20T10:00:09.000Z'));
      const { client } = await startOn(earlier);
      await assertMigrated(earlier, client);
    });
  }

  it('when the migration runs again over a migrated database, then it changes nothing', async () => {
    const earlier = await earlierDatabase();
    const { client } = await startOn(earlier);
    await assertMigrated(earlier, client);
    const counters = await earlier.counters();
    await earlier.migrateUntil(NUMBERS.statements.length);
    assert.deepEqual(await earlier.counters(), counters);
    const [a] = earlier.orgs;
    assert.deepEqual(await client.createTicket({ orgId: a, content: 'again' }), {
      ticketId: earlier.highest(a) + 2,
      duplicate: false,
    });
  });
});
