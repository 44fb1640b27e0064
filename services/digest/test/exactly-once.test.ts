// Exactly-once counting: every event delivered twice (JetStream dedupe inside the window, stored
// copies beyond it), the consumer restarted mid-stream, the database failing for a while.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { freePort } from '../../../test/support/backends.js';
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
  ticketEvents,
  weekCounts,
  type OwnBackends,
  type RunningDigest,
  type TestDatabase,
  type TicketEventEnvelope,
} from './helpers.js';

describe('exactly-once aggregation', () => {
  let own: OwnBackends;
  let db: TestDatabase;
  let publisher: EventPublisher;
  let env: Record<string, string>;
  const running: RunningDigest[] = [];
  const lastWeek = lastCompleteWeek(new Date());

  before(async () => {
    // An own NATS server: the metrics asserted below count every event of the stream.
    own = await startOwnBackends('once');
    db = own.db;
    const natsUrl = own.nats.url;
    publisher = await EventPublisher.connect(natsUrl);
    env = {
      MYSQL_URL: db.url,
      NATS_URL: natsUrl,
      DIGEST_CONSUMER_NAME: newConsumerName(),
      DIGEST_EMBEDDINGS: 'lexical',
      // One event per transaction, so a stop can fall between any two (batch-apply.test.ts
      // covers restarts between and during batches).
      DIGEST_CONSUMER_BATCH: '1',
    };
  });

  after(async () => {
    for (const r of running) await r.stop();
    await publisher?.close();
    await own?.stop();
  });

  async function startWithMetrics(): Promise<RunningDigest & { metricsPort: number }> {
    const svc = await startDigest({ ...env, DIGEST_METRICS_PORT: String(await freePort()) });
    running.push(svc);
    return Object.assign(svc, { metricsPort: svc.server.metricsPort! });
  }

  async function stop(svc: RunningDigest): Promise<void> {
    running.splice(running.indexOf(svc), 1);
    await svc.stop();
  }

  const caughtUp = async (port: number) =>
    (await scrapeMetrics(port)).get('digest_consumer_pending') === 0 ? true : undefined;

  it('when every event is published twice and the consumer restarts mid-stream, then every ticket is counted once', async () => {
    const org = newOrg('once');
    // Enough tickets that the first process is still mid-stream when the test sees its first
    // events and stops it (40 were all applied before a loaded machine's poll saw five).
    const count = 120;
    const tickets = Array.from({ length: count }, (_, i) =>
      ticketEvents(
        org,
        `Question number ${i} about invoices`,
        inWeek(lastWeek, i % 7, 8, i),
        i % 3 === 0 ? { answered: i % 2 === 0 } : undefined,
      ),
    );
    const events = tickets.flat();
    const ids = events.map((e) => e.id);

    // The outbox relay's retry inside the duplicate window: JetStream drops it by Nats-Msg-Id.
    await publisher.publish(events);
    assert.equal((await publisher.publish(events)).duplicates, events.length);
    // A republish after the window (a new Nats-Msg-Id): stored again, the consumer must skip it.
    await publisher.publish(events, (e) => `${e.id}#late`);

    const first = await startWithMetrics();
    await eventually(
      async () => ((await processedCount(db.url, ids)) >= 5 ? true : undefined),
      15_000,
      'the first events',
    );
    await stop(first); // mid-stream: the in-flight event finishes, the rest stays on the stream
    const afterFirst = await processedCount(db.url, ids);

    const second = await startWithMetrics();
    await eventually(
      async () => ((await processedCount(db.url, ids)) === ids.length ? true : undefined),
      20_000,
      'all events',
    );
    await eventually(() => caughtUp(second.metricsPort), 10_000, 'consumer caught up');

    assert.deepEqual(await weekCounts(db.url, org), { [lastWeek]: count });
    const rows = await queryRows<{ n: number; answered: number; resolved: number }>(
      db.url,
      `SELECT COUNT(*) AS n, SUM(answered) AS answered, SUM(status = 'resolved') AS resolved FROM digest_tickets WHERE org_id = ?`,
      [org],
    );
    assert.equal(Number(rows[0]!.n), count);
    const answered = tickets.filter((t) =>
      t.some((e) => e.type === 'tickets.triaged' && e.data.answered === true),
    ).length;
    assert.equal(Number(rows[0]!.answered), answered);
    assert.equal(Number(rows[0]!.resolved), answered);

    const m = await scrapeMetrics(second.metricsPort);
    assert.ok(
      afterFirst < ids.length,
      `the restart happened mid-stream (${afterFirst} of ${ids.length} applied before it)`,
    );
    assert.equal(
      m.get('digest_events_processed_total'),
      ids.length - afterFirst,
      'the second process applied exactly the rest',
    );
    const duplicates = m.get('digest_events_duplicate_total')!;
    assert.ok(
      duplicates > 0 && duplicates <= events.length,
      'the late copies were skipped as duplicates',
    );
    assert.equal(
      (await second.client.buildDigest({ orgId: org, weekStart: lastWeek })).digest!.ticketCount,
      count,
    );

    // The same copies once more, to a third consumer process: nothing changes, each one is a duplicate.
    await stop(second);
    const third = await startWithMetrics();
    await publisher.publish(events, (e) => `${e.id}#later`);
    await eventually(
      async () =>
        (await scrapeMetrics(third.metricsPort)).get('digest_events_duplicate_total') ===
        events.length
          ? true
          : undefined,
      20_000,
      'the third copies skipped',
    );
    assert.equal((await scrapeMetrics(third.metricsPort)).get('digest_events_processed_total'), 0);
    assert.deepEqual(await weekCounts(db.url, org), { [lastWeek]: count });
  });

  it('when the database fails while events arrive, then they are redelivered until applied and counted once', async () => {
    const svc = running[0] as RunningDigest & { metricsPort: number };
    const org = newOrg('dbdown');
    const events: TicketEventEnvelope[] = Array.from({ length: 3 }, (_, i) =>
      ticketEvents(org, `Broken ${i}`, inWeek(lastWeek, 2, 12, i)),
    ).flat();
    await queryRows(db.url, 'RENAME TABLE digest_weeks TO digest_weeks_offline');
    try {
      await publisher.publish(events);
      await eventually(
        async () =>
          (await scrapeMetrics(svc.metricsPort)).get('digest_events_failed_total')! >= 2
            ? true
            : undefined,
        15_000,
        'failed attempts',
      );
    } finally {
      await queryRows(db.url, 'RENAME TABLE digest_weeks_offline TO digest_weeks');
    }
    await eventually(
      async () => ((await weekCounts(db.url, org))[lastWeek] === 3 ? true : undefined),
      20_000,
      'counted after recovery',
    );
    const m = await scrapeMetrics(svc.metricsPort);
    assert.ok(
      m.get('digest_events_redelivered_total')! >= 1,
      'failed events came back as redeliveries',
    );
    assert.equal(
      await processedCount(
        db.url,
        events.map((e) => e.id),
      ),
      3,
    );
    assert.deepEqual(await weekCounts(db.url, org), { [lastWeek]: 3 });
  });
});
