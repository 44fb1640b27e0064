// NATS stops (killed) while events are pending and comes back: every ticket is counted once.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { freePort, type NatsHandle } from '../../../test/support/backends.js';
import { lastCompleteWeek } from '../src/domain/iso-week.js';
import {
  EventPublisher,
  eventually,
  inWeek,
  newOrg,
  processedCount,
  scrapeMetrics,
  startDigest,
  startOwnBackends,
  ticketEvents,
  weekCounts,
  type OwnBackends,
  type RunningDigest,
  type TestDatabase,
} from './helpers.js';
import { stopAll } from '../../../test/support/testing.js';

describe('NATS outage', () => {
  let own: OwnBackends;
  let db: TestDatabase;
  let nats: NatsHandle;
  let svc: RunningDigest | undefined;

  before(async () => {
    own = await startOwnBackends('nats');
    ({ db, nats } = own);
  });

  after(() => stopAll(svc, own));

  const WORKERS = 4;

  // One event per transaction, and batches: while NATS is away at most the batches in hand
  // (one event each, or up to BATCH each) are applied.
  for (const BATCH of [1, 10]) {
    it(`when NATS is killed while events are pending and restarted, then every event is applied once${BATCH > 1 ? ` (batches of up to ${BATCH})` : ''}`, async () => {
      const org = newOrg('outage');
      const lastWeek = lastCompleteWeek(new Date());
      // As many transactions' worth of events for either batch size: with batches of 10, 60
      // tickets were all applied within one 50 ms poll once, and the kill found nothing pending.
      const firstTickets = 60 * BATCH;
      const firstBatch = Array.from({ length: firstTickets }, (_, i) =>
        ticketEvents(org, `Outage question ${i}`, inWeek(lastWeek, i % 7, 9, i), {
          answered: i % 4 === 0,
        }),
      ).flat();
      let publisher = await EventPublisher.connect(nats.url);
      await publisher.publish(firstBatch);
      await publisher.close();

      await svc?.stop();
      svc = await startDigest({
        MYSQL_URL: db.url,
        NATS_URL: nats.url,
        DIGEST_EMBEDDINGS: 'lexical',
        DIGEST_METRICS_PORT: String(await freePort()),
        DIGEST_CONSUMER_CONCURRENCY: String(WORKERS),
        DIGEST_CONSUMER_BATCH: String(BATCH),
      });
      const firstIds = firstBatch.map((e) => e.id);
      await eventually(
        async () => ((await processedCount(db.url, firstIds)) >= 3 ? true : undefined),
        15_000,
        'the first events',
      );
      nats.kill('SIGKILL');
      const beforeRestart = await processedCount(db.url, firstIds);
      await new Promise((r) => setTimeout(r, 1_500));
      // Nothing pulled after the kill is applied: at most what the consumer held then (twice
      // the batches its workers take at once). Not only the batches in hand: the client learns
      // of the disconnect when its socket's close is read, after what NATS had already sent, and
      // until then a worker that finished its batch may take the next one it holds.
      const away = (await processedCount(db.url, firstIds)) - beforeRestart;
      assert.ok(away <= 2 * WORKERS * BATCH, `${away} events applied while NATS was away`);
      await nats.restart();

      const secondBatch = Array.from({ length: 10 }, (_, i) =>
        ticketEvents(org, `After the outage ${i}`, inWeek(lastWeek, 6, 12, i)),
      ).flat();
      publisher = await EventPublisher.connect(nats.url);
      await publisher.publish(secondBatch);
      await publisher.close();

      const allIds = [...firstIds, ...secondBatch.map((e) => e.id)];
      await eventually(
        async () => ((await processedCount(db.url, allIds)) === allIds.length ? true : undefined),
        30_000,
        'every event applied',
      );
      assert.ok(
        beforeRestart < firstIds.length,
        `events were still pending at the kill (${beforeRestart}/${firstIds.length} applied)`,
      );
      assert.deepEqual(await weekCounts(db.url, org), { [lastWeek]: firstTickets + 10 });
      await eventually(
        async () =>
          (await scrapeMetrics(svc!.server.metricsPort!)).get('digest_consumer_pending') === 0
            ? true
            : undefined,
        15_000,
        'consumer lag back to 0',
      );
      assert.equal(
        (await svc.client.buildDigest({ orgId: org, weekStart: lastWeek })).digest!.ticketCount,
        firstTickets + 10,
      );
    });
  }
});
