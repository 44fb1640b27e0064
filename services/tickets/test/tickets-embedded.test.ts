// The tickets contract on the embedded adapters (no servers), plus what only they must show:
// everything survives a restart on the same DATA_DIR.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { CursorCodec } from '../src/domain/cursor.js';
import { ticketsContract, type ContractEvent } from './contract.js';
import { assertAppError, eventually, newOrg, startService } from './helpers.js';

function readEventsFile(dataDir: string): ContractEvent[] {
  const file = join(dataDir, 'events', 'tickets.jsonl');
  if (!existsSync(file)) return [];
  return readFileSync(file, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line) as ContractEvent);
}

const dirs: string[] = [];
function tempDataDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'tickets-embedded-'));
  dirs.push(dir);
  return dir;
}
after(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

ticketsContract('embedded', async () => {
  const dataDir = tempDataDir();
  const service = await startService({ EMBEDDED: 'true', DATA_DIR: dataDir });
  return {
    client: service.client,
    readEvents: async (orgId) => readEventsFile(dataDir).filter((e) => e.org_id === orgId),
    stop: () => service.stop(),
  };
});

describe('tickets service (embedded restarts)', () => {
  it('when the service restarts on the same DATA_DIR, then tickets, statuses, idempotency keys, triage and cursors survive and ids keep growing', async () => {
    const dataDir = tempDataDir();
    const orgId = newOrg();
    const first = await startService({ EMBEDDED: 'true', DATA_DIR: dataDir });
    const created: number[] = [];
    for (let i = 0; i < 25; i++)
      created.push((await first.client.createTicket({ orgId, content: `r${i}` })).ticketId);
    const keyed = await first.client.createTicket({
      orgId,
      content: 'keyed',
      idempotencyKey: 'restart-key',
    });
    await first.client.updateTicketStatus({ orgId, ticketId: created[0]!, status: 'in_progress' });
    await first.client.applyTriage({
      orgId,
      ticketId: created[1]!,
      eventId: 'ev-restart',
      category: 'bug',
      priority: 'high',
      aiSummary: 's',
      resolve: false,
    });
    const page1 = await first.client.listTickets({ orgId, limit: 20 });
    await eventually(
      async () => (readEventsFile(dataDir).length >= 28 ? true : undefined),
      10_000,
      'events written',
    );
    await first.stop();

    const second = await startService({ EMBEDDED: 'true', DATA_DIR: dataDir });
    try {
      const replay = await second.client.createTicket({
        orgId,
        content: 'other body',
        idempotencyKey: 'restart-key',
      });
      assert.deepEqual(replay, { ticketId: keyed.ticketId, duplicate: true });
      assert.equal(
        (await second.client.getTicket({ orgId, ticketId: created[0]! })).ticket?.status,
        'in_progress',
      );
      assert.equal(
        (await second.client.getTicket({ orgId, ticketId: created[1]! })).ticket?.category,
        'bug',
      );
      const again = await second.client.applyTriage({
        orgId,
        ticketId: created[1]!,
        eventId: 'ev-restart',
        category: 'how_to',
        priority: 'low',
        aiSummary: 'x',
        resolve: false,
      });
      assert.equal(again.applied, false);
      // A cursor from before the restart still works (the secret is persisted).
      const page2 = await second.client.listTickets({ orgId, limit: 20, cursor: page1.nextCursor });
      assert.equal(page1.tickets.length + page2.tickets.length, 26);
      assert.equal(page2.nextCursor, undefined);
      const fresh = await second.client.createTicket({ orgId, content: 'after restart' });
      assert.ok(fresh.ticketId > Math.max(...created, keyed.ticketId));

      await eventually(
        async () => (readEventsFile(dataDir).length >= 29 ? true : undefined),
        10_000,
        'events written',
      );
      const events = readEventsFile(dataDir).filter((e) => e.org_id === orgId);
      assert.equal(new Set(events.map((e) => e.id)).size, events.length, 'no event twice');
      assert.equal(events.filter((e) => e.type === 'tickets.created').length, 27);
    } finally {
      await second.stop();
    }
  });

  it('when the journal was written while ids came from one counter, then those tickets keep their ids as numbers, keys and cursors still work, and each organization continues above its highest id, also after a restart', async () => {
    const dataDir = tempDataDir();
    const [a, b] = [newOrg('journal-a'), newOrg('journal-b')];
    const secret = randomBytes(32);
    const at = Date.parse('2026-11-20T10:00:00.000Z');
    // Records as the earlier version journaled them: `id` from one counter, no other key.
    const earlier = [a, b, a, a, b, a].map((orgId, i) => ({
      id: i + 1,
      orgId,
      content: `earlier ${i + 1}`,
      authorName: null,
      idempotencyKey: i === 0 ? 'a-key' : null,
      status: 'open',
      priority: 'medium',
      category: null,
      aiSummary: null,
      aiAnswer: null,
      createdAt: at + i * 1000,
      updatedAt: at + i * 1000,
    }));
    mkdirSync(join(dataDir, 'tickets'), { recursive: true });
    writeFileSync(
      join(dataDir, 'tickets', 'journal.jsonl'),
      [
        { k: 'secret', secret: secret.toString('base64') },
        { k: 'tx', tickets: earlier.slice(0, 3) },
        { k: 'tx', tickets: earlier.slice(3) },
      ]
        .map((r) => `${JSON.stringify(r)}\n`)
        .join(''),
    );
    const ofA = earlier.filter((t) => t.orgId === a).map((t) => t.id);
    // A cursor handed out then, after a's ticket 4.
    const cursor = new CursorCodec(secret).encode({ createdAtMs: at + 3000, id: 4 }, a, {});

    const first = await startService({ EMBEDDED: 'true', DATA_DIR: dataDir });
    try {
      for (const t of earlier) {
        const { ticket } = await first.client.getTicket({ orgId: t.orgId, ticketId: t.id });
        assert.equal(ticket?.content, t.content);
      }
      await assertAppError(first.client.getTicket({ orgId: b, ticketId: 1 }), 'not_found');
      const page = await first.client.listTickets({ orgId: a, limit: 20, cursor });
      assert.deepEqual(
        page.tickets.map((t) => t.id),
        [3, 1],
      );
      assert.deepEqual(
        await first.client.createTicket({ orgId: a, content: 'x', idempotencyKey: 'a-key' }),
        { ticketId: 1, duplicate: true },
      );
      assert.deepEqual(await first.client.createTicket({ orgId: a, content: 'new a' }), {
        ticketId: Math.max(...ofA) + 1,
        duplicate: false,
      });
      assert.deepEqual(await first.client.createTicket({ orgId: b, content: 'new b' }), {
        ticketId: 6,
        duplicate: false,
      });
      const created = await eventually(
        async () => {
          const e = readEventsFile(dataDir).filter((x) => x.type === 'tickets.created');
          return e.length >= 2 ? e : undefined;
        },
        10_000,
        'two created events',
      );
      assert.deepEqual(
        created.map((e) => [e.org_id, e.ticket_number]),
        [
          [a, 7],
          [b, 6],
        ],
      );
      // Keys continue above every earlier id: no event names a key an earlier ticket had.
      for (const e of created) assert.ok(e.ticket_id > earlier.length);
    } finally {
      await first.stop();
    }

    const second = await startService({ EMBEDDED: 'true', DATA_DIR: dataDir });
    try {
      assert.equal(
        (await second.client.getTicket({ orgId: b, ticketId: 6 })).ticket?.content,
        'new b',
      );
      assert.equal(
        (await second.client.getTicket({ orgId: a, ticketId: 4 })).ticket?.content,
        'earlier 4',
      );
      assert.deepEqual(await second.client.createTicket({ orgId: a, content: 'after restart' }), {
        ticketId: 8,
        duplicate: false,
      });
    } finally {
      await second.stop();
    }
  });

  it('when a second service opens a DATA_DIR in use, then it refuses to start', async () => {
    const dataDir = tempDataDir();
    const first = await startService({ EMBEDDED: 'true', DATA_DIR: dataDir });
    try {
      await assert.rejects(
        startService({ EMBEDDED: 'true', DATA_DIR: dataDir }),
        /already open|in use/,
      );
    } finally {
      await first.stop();
    }
  });

  it('when the journal has many superseded records, then a restart compacts it and keeps the state', async () => {
    const dataDir = tempDataDir();
    const orgId = newOrg();
    const first = await startService({ EMBEDDED: 'true', DATA_DIR: dataDir });
    const { ticketId } = await first.client.createTicket({ orgId, content: 'churn' });
    for (let i = 0; i < 200; i++) {
      await first.client.updateTicketStatus({ orgId, ticketId, status: 'in_progress' });
      await first.client.updateTicketStatus({ orgId, ticketId, status: 'resolved' });
      await first.client.updateTicketStatus({ orgId, ticketId, status: 'open' });
    }
    await eventually(
      async () => (readEventsFile(dataDir).length >= 601 ? true : undefined),
      20_000,
      'events written',
    );
    await first.stop();
    const journal = join(dataDir, 'tickets', 'journal.jsonl');
    const sizeBefore = readFileSync(journal).length;

    const second = await startService({ EMBEDDED: 'true', DATA_DIR: dataDir });
    try {
      assert.ok(readFileSync(journal).length < sizeBefore / 10, 'journal was compacted');
      assert.equal((await second.client.getTicket({ orgId, ticketId })).ticket?.status, 'open');
      await assertAppError(
        second.client.updateTicketStatus({ orgId, ticketId, status: 'closed' }),
        'conflict',
      );
    } finally {
      await second.stop();
    }
  });

  it('when a failed write left half a record in the middle of the journal and a crash tore its end, then the service starts with every complete ticket', async () => {
    const dataDir = tempDataDir();
    const orgId = newOrg();
    const first = await startService({ EMBEDDED: 'true', DATA_DIR: dataDir });
    const ids: number[] = [];
    for (const content of ['one', 'two'])
      ids.push((await first.client.createTicket({ orgId, content })).ticketId);
    await first.stop();
    // What an earlier version left after a full disk: the start of a write that failed, then
    // the next acknowledged record on the same line; and a record torn by a kill -9.
    const journal = join(dataDir, 'tickets', 'journal.jsonl');
    const lines = readFileSync(journal, 'utf8').split('\n').filter(Boolean);
    const last = lines.pop()!;
    lines.push(last.slice(0, 40) + last);
    writeFileSync(journal, lines.join('\n') + '\n' + last.slice(0, 25));

    const second = await startService({ EMBEDDED: 'true', DATA_DIR: dataDir });
    try {
      for (const ticketId of ids)
        assert.equal((await second.client.getTicket({ orgId, ticketId })).ticket?.id, ticketId);
      const next = await second.client.createTicket({ orgId, content: 'three' });
      assert.equal(next.ticketId, ids[1]! + 1);
    } finally {
      await second.stop();
    }
  });
});
