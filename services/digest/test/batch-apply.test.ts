// Events applied in batches (one transaction each) against real MariaDB and NATS: a ticket's
// events folded together, repeats in and across batches, concurrent batches racing for the same
// new tickets and event ids, and a restart between batches (nats-outage.test.ts kills NATS with
// batches in hand).
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { freePort, type NatsHandle } from '../../../test/support/backends.js';
import { MysqlDigestRepository } from '../src/data-access/mysql/digest-repository.js';
import { parseTicketEvent, type TicketEvent } from '../src/domain/events.js';
import { lastCompleteWeek } from '../src/domain/iso-week.js';
import {
  EventPublisher,
  eventually,
  inWeek,
  newConsumerName,
  newOrg,
  processedCount,
  queryRows,
  scrapeMetrics,
  startDigest,
  startOwnBackends,
  testLogger,
  ticketEvents,
  weekCounts,
  type OwnBackends,
  type RunningDigest,
  type TestDatabase,
  type TicketEventEnvelope,
} from './helpers.js';

/** The event as the consumer hands it over (parsed by the contract). */
function parsed(envelope: TicketEventEnvelope): TicketEvent {
  const result = parseTicketEvent(JSON.stringify(envelope));
  assert.equal(result.kind, 'event');
  return (result as { event: TicketEvent }).event;
}

describe('batched aggregation', () => {
  let own: OwnBackends;
  let db: TestDatabase;
  let nats: NatsHandle;
  let repo: MysqlDigestRepository;
  const running: RunningDigest[] = [];
  const lastWeek = lastCompleteWeek(new Date());

  before(async () => {
    own = await startOwnBackends('batch');
    ({ db, nats } = own);
    repo = await MysqlDigestRepository.open(db.url, testLogger);
  });

  after(async () => {
    for (const r of running) await r.stop();
    await repo?.close();
    await own?.stop();
  });

  it('when one batch holds tickets created, triaged and resolved, plus repeats, then each ticket is folded from all its events, counted once, and the repeats are duplicates', async () => {
    const org = newOrg('batch');
    const answered = ticketEvents(org, 'How do I reset my password?', inWeek(lastWeek, 1), {
      answered: true,
    });
    const open = ticketEvents(org, 'The export hangs', inWeek(lastWeek, 2), { answered: false });
    // Triaged before created (a redelivery overtook it), and a repeat of a created event.
    const batch = [open[1]!, ...answered, open[0]!, answered[0]!].map(parsed);
    const outcomes = await repo.applyEvents(batch);
    assert.deepEqual(outcomes, [
      'applied',
      'applied',
      'applied',
      'applied',
      'applied',
      'duplicate',
    ]);
    assert.deepEqual(await repo.applyEvents(batch.slice(0, 2)), ['duplicate', 'duplicate']);

    assert.deepEqual(await weekCounts(db.url, org), { [lastWeek]: 2 });
    const rows = await queryRows<{ ticket_id: number; status: string; answered: number }>(
      db.url,
      'SELECT ticket_id, status, answered, category FROM digest_tickets WHERE org_id = ? ORDER BY ticket_id',
      [org],
    );
    assert.deepEqual(
      rows.map((r) => [Number(r.ticket_id), r.status, Number(r.answered)]),
      [
        [answered[0]!.ticket_id, 'resolved', 1],
        [open[0]!.ticket_id, 'open', 0],
      ].sort((a, b) => Number(a[0]) - Number(b[0])),
    );
  });

  it('when batches that share new tickets and event ids are applied concurrently, then every event is applied exactly once and every ticket counted once', async () => {
    const org = newOrg('race');
    const tickets = Array.from({ length: 30 }, (_, i) =>
      ticketEvents(org, `Race question ${i}`, inWeek(lastWeek, i % 7, 10, i), {
        answered: i % 3 === 0,
      }),
    );
    const events = tickets.flat().map(parsed);
    // Eight batches, each a shuffled half of all events: every event in about four of them.
    let seed = 7;
    const random = () => (seed = (seed * 16807) % 2147483647) / 2147483647;
    const batches = Array.from({ length: 8 }, () =>
      events.filter(() => random() < 0.5).sort(() => random() - 0.5),
    );
    batches.push(events); // and one with everything, so none is missed
    const outcomes = (await Promise.all(batches.map((b) => repo.applyEvents(b)))).flat();
    assert.equal(
      outcomes.filter((o) => o === 'applied').length,
      events.length,
      'each event applied once',
    );
    assert.equal(
      await processedCount(
        db.url,
        events.map((e) => e.id),
      ),
      events.length,
    );
    assert.deepEqual(await weekCounts(db.url, org), { [lastWeek]: 30 });
    const rows = await queryRows<{ n: number; answered: number }>(
      db.url,
      'SELECT COUNT(*) AS n, SUM(answered) AS answered FROM digest_tickets WHERE org_id = ?',
      [org],
    );
    assert.equal(Number(rows[0]!.n), 30);
    assert.equal(Number(rows[0]!.answered), 10);
  });

  it('when the service restarts between batches, with every event published twice, then every ticket is counted once', async () => {
    const org = newOrg('restart');
    // Enough events that the first process is still busy when the test sees its first batch
    // and stops it (with 300 tickets a loaded machine's slower polling saw them all applied).
    const tickets = 1000;
    const events = Array.from({ length: tickets }, (_, i) =>
      ticketEvents(org, `Batch question ${i}`, inWeek(lastWeek, i % 7, 11, i % 60), {
        answered: i % 4 === 0,
      }),
    ).flat();
    const ids = events.map((e) => e.id);
    const publisher = await EventPublisher.connect(nats.url);
    await publisher.publish(events);
    await publisher.publish(events, (e) => `${e.id}#late`); // stored again: skipped as duplicates
    await publisher.close();
    const env = {
      MYSQL_URL: db.url,
      NATS_URL: nats.url,
      DIGEST_EMBEDDINGS: 'lexical',
      DIGEST_CONSUMER_NAME: newConsumerName(),
      DIGEST_CONSUMER_CONCURRENCY: '1',
      DIGEST_CONSUMER_BATCH: '10',
    };

    const first = await startDigest({ ...env, DIGEST_METRICS_PORT: String(await freePort()) });
    running.push(first);
    await eventually(
      async () => ((await processedCount(db.url, ids)) >= 10 ? true : undefined),
      15_000,
      'the first batch',
    );
    await first.stop(); // the batches in hand finish; the rest stays on the stream
    running.splice(running.indexOf(first), 1);
    const afterFirst = await processedCount(db.url, ids);

    const second = await startDigest({ ...env, DIGEST_METRICS_PORT: String(await freePort()) });
    running.push(second);
    await eventually(
      async () => ((await processedCount(db.url, ids)) === ids.length ? true : undefined),
      20_000,
      'every event',
    );
    await eventually(
      async () =>
        (await scrapeMetrics(second.server.metricsPort!)).get('digest_consumer_pending') === 0
          ? true
          : undefined,
      15_000,
      'consumer caught up',
    );
    assert.ok(afterFirst < ids.length, `stopped mid-stream (${afterFirst}/${ids.length})`);
    assert.deepEqual(await weekCounts(db.url, org), { [lastWeek]: tickets });
    const m = await scrapeMetrics(second.server.metricsPort!);
    assert.equal(m.get('digest_events_processed_total'), ids.length - afterFirst);
    assert.ok(m.get('digest_events_duplicate_total')! > 0, 'the late copies were skipped');
  });
});
