// Batched aggregation in MySQL: several events in one transaction, a duplicate id inside the
// batch, concurrent batches over the same tickets and week, and a batch failing half-way.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createLogger } from '@support-agent/shared';
import { createTestDatabase } from '../../../test/support/mysql.js';
import { MysqlDigestRepository } from '../src/data-access/mysql/digest-repository.js';
import { parseTicketEvent, type TicketEvent } from '../src/domain/events.js';
import { weekStartOf } from '../src/domain/iso-week.js';
import {
  createdEvent,
  newOrg,
  newTicketId,
  statusChangedEvent,
  triagedEvent,
  type TicketEventEnvelope,
} from './helpers.js';

function parsed(e: TicketEventEnvelope): TicketEvent {
  const p = parseTicketEvent(JSON.stringify(e));
  if (p.kind !== 'event') throw new Error(`not an event: ${p.kind}`);
  return p.event;
}

describe('batched event application (MySQL)', () => {
  let db: Awaited<ReturnType<typeof createTestDatabase>>;
  let repo: MysqlDigestRepository;
  const at = new Date(Date.now() - 3_600_000);
  const week = weekStartOf(at);

  before(async () => {
    db = await createTestDatabase('digest_batch');
    repo = await MysqlDigestRepository.open(db.url, createLogger('digest-test', 'silent'));
  });

  after(async () => {
    await repo?.close();
    await db?.drop();
  });

  it('when a batch holds a ticket life and a repeated event id, then each id counts once', async () => {
    const org = newOrg('batch');
    const id = newTicketId();
    const created = createdEvent(org, id, 'How do I reset my password?', at);
    const triaged = triagedEvent(org, id, new Date(at.getTime() + 1_000), { answered: true });
    const outcomes = await repo.applyEvents([created, triaged, created].map(parsed));
    assert.deepEqual(outcomes, ['applied', 'applied', 'duplicate']);
    assert.equal(await repo.weekTicketCount(org, week), 1);
    const [ticket] = await repo.weekTickets(org, week, 10);
    assert.equal(ticket?.status, 'resolved');
    assert.equal(ticket?.answered, true);
    // Delivered again later: nothing changes.
    assert.deepEqual(await repo.applyEvents([triaged, created].map(parsed)), [
      'duplicate',
      'duplicate',
    ]);
    assert.equal(await repo.weekTicketCount(org, week), 1);
  });

  it('when overlapping batches run concurrently, then every ticket is counted exactly once', async () => {
    const org = newOrg('conc');
    const ids = Array.from({ length: 40 }, () => newTicketId());
    const events = ids.flatMap((id) => [
      createdEvent(org, id, `ticket ${id}`, at),
      statusChangedEvent(org, id, new Date(at.getTime() + 2_000), 'open', 'closed'),
    ]);
    // Eight batches of shuffled slices, each event in two of them: duplicates race across transactions.
    const batches = Array.from({ length: 8 }, (_, b) =>
      events.filter((_, i) => i % 4 === b % 4).sort(() => Math.random() - 0.5),
    );
    const outcomes = (
      await Promise.all(batches.map((b) => repo.applyEvents(b.map(parsed))))
    ).flat();
    assert.equal(outcomes.filter((o) => o === 'applied').length, events.length);
    assert.equal(await repo.weekTicketCount(org, week), ids.length);
    const tickets = await repo.weekTickets(org, week, 100);
    assert.equal(tickets.length, ids.length);
    assert.ok(
      tickets.every((t) => t.status === 'closed'),
      'the later status wins in any order',
    );
  });

  it('when a batch fails half-way, then none of its events is applied or recorded', async () => {
    const org = newOrg('half');
    const good = createdEvent(org, newTicketId(), 'fine', at);
    // Too long for the TEXT column: the ticket write fails after the event ids were inserted.
    const bad = createdEvent(org, newTicketId(), 'x'.repeat(70_000), at);
    await assert.rejects(repo.applyEvents([good, bad].map(parsed)));
    assert.equal(await repo.weekTicketCount(org, week), 0);
    // Nothing was recorded as processed: the good event applies when delivered again.
    assert.deepEqual(await repo.applyEvents([parsed(good)]), ['applied']);
    assert.equal(await repo.weekTicketCount(org, week), 1);
  });
});
