// The weekly run: exactly once across replicas (MySQL lease + digest_runs), after the consumer caught up.
import assert from 'node:assert/strict';
import { after, before, describe, it, mock } from 'node:test';
import { createTestDatabase } from '../../../test/support/mysql.js';
import { freePort } from '../../../test/support/backends.js';
import { addDays, lastCompleteWeek, weekEndInstant } from '../src/domain/iso-week.js';
import { MysqlDigestRepository } from '../src/data-access/mysql/digest-repository.js';
import { WeeklyDigestScheduler } from '../src/entry-points/scheduler.js';
import { DigestMetrics } from '../src/entry-points/metrics.js';
import {
  EventPublisher,
  eventually,
  inWeek,
  newConsumerName,
  newOrg,
  queryRows,
  requireEnv,
  scrapeMetrics,
  startDigest,
  testLogger,
  ticketEvents,
  type RunningDigest,
} from './helpers.js';

describe('weekly schedule across replicas', () => {
  let db: Awaited<ReturnType<typeof createTestDatabase>>;
  const replicas: RunningDigest[] = [];

  before(async () => {
    db = await createTestDatabase('digest_sched');
  });

  after(async () => {
    for (const r of replicas) await r.stop();
    await db?.drop();
  });

  it('when two replicas share the database and NATS and the weekly run is due, then it happens once and every org with tickets gets its digest', async () => {
    const natsUrl = requireEnv('TEST_NATS_URL');
    const lastWeek = lastCompleteWeek(new Date());
    const orgs = [newOrg('s1'), newOrg('s2'), newOrg('s3')];
    const quiet = newOrg('quiet'); // tickets only the week before: no digest from this run
    const publisher = await EventPublisher.connect(natsUrl);
    await publisher.publish([
      ...orgs.flatMap((org, n) =>
        Array.from({ length: n + 2 }, (_, i) =>
          ticketEvents(org, `How do I set up SSO number ${i}?`, inWeek(lastWeek, i, 10)),
        ).flat(),
      ),
      ...ticketEvents(quiet, 'Anything?', inWeek(addDays(lastWeek, -7), 3)),
    ]);
    await publisher.close();

    const env = {
      MYSQL_URL: db.url,
      NATS_URL: natsUrl,
      DIGEST_CONSUMER_NAME: newConsumerName(),
      DIGEST_EMBEDDINGS: 'lexical',
      DIGEST_SCHEDULER_ENABLED: 'true',
      DIGEST_SCHEDULE_OFFSET_MINUTES: '0', // due since this Monday 00:00: last week's run is due now
      DIGEST_SCHEDULER_TICK_MS: '50',
      DIGEST_LEASE_TTL_MS: '1000',
      DIGEST_LAG_POLL_MS: '100',
    };
    // Both start with a backlog (the events above): the run must wait until it is applied.
    const [a, b] = await Promise.all([
      startDigest({ ...env, DIGEST_METRICS_PORT: String(await freePort()) }),
      startDigest({ ...env, DIGEST_METRICS_PORT: String(await freePort()) }),
    ]);
    replicas.push(a!, b!);

    const run = await eventually(
      async () => {
        const rows = await queryRows<{
          finished_at: string | null;
          orgs_built: number;
          attempts: number;
        }>(
          db.url,
          'SELECT finished_at, orgs_built, attempts FROM digest_runs WHERE week_start = ?',
          [lastWeek],
        );
        return rows[0]?.finished_at ? rows[0] : undefined;
      },
      30_000,
      'the weekly run to finish',
    );
    await new Promise((r) => setTimeout(r, 1_000)); // twenty more ticks on each replica

    const runs = await queryRows<{ week_start: string }>(
      db.url,
      'SELECT week_start FROM digest_runs',
    );
    assert.deepEqual(
      runs.map((r) => r.week_start),
      [lastWeek],
    );
    assert.equal(Number(run.attempts), 1);
    const digests = await queryRows<{ org_id: string; ticket_count: number }>(
      db.url,
      'SELECT org_id, ticket_count FROM digests WHERE week_start = ? AND org_id IN (?) ORDER BY org_id',
      [lastWeek, [...orgs, quiet]],
    );
    // Every org with tickets last week, with every ticket counted (the run waited for the consumer).
    assert.deepEqual(
      digests.map((d) => [d.org_id, Number(d.ticket_count)]),
      orgs.map((org, n) => [org, n + 2]).sort(),
    );
    // Other suites' orgs may have tickets that week too (shared stream): at least ours were built.
    assert.ok(Number(run.orgs_built) >= orgs.length);

    const builds = await Promise.all(
      [a!, b!].map(
        async (r) =>
          (await scrapeMetrics(r.server.metricsPort!)).get(
            'digest_builds_total{trigger="schedule"}',
          ) ?? 0,
      ),
    );
    assert.equal(
      builds[0]! + builds[1]!,
      Number(run.orgs_built),
      `builds per replica: ${builds.join(', ')}`,
    );
    assert.ok(builds.includes(0), 'one replica did the whole run');
    const generated = await queryRows<{ generated_at: string }>(
      db.url,
      'SELECT generated_at FROM digests WHERE week_start = ? ORDER BY org_id',
      [lastWeek],
    );
    await new Promise((r) => setTimeout(r, 300));
    assert.deepEqual(
      await queryRows<{ generated_at: string }>(
        db.url,
        'SELECT generated_at FROM digests WHERE week_start = ? ORDER BY org_id',
        [lastWeek],
      ),
      generated,
      'no replica built the week again',
    );
    const latest = await a!.client.getLatestDigest({ orgId: orgs[2]! });
    assert.equal(latest.digest?.ticketCount, 4);
  });

  it('when the lease expires mid-run and another replica takes it, then the week is not claimed again; a stale run is taken over', async () => {
    const repo = await MysqlDigestRepository.open(db.url, testLogger);
    try {
      const week = '2020-01-06';
      assert.equal(await repo.tryAcquireLease('test-lease', 'A', 300), true);
      assert.equal(await repo.tryAcquireLease('test-lease', 'B', 300), false);
      assert.equal(await repo.tryAcquireLease('test-lease', 'A', 300), true, 'the holder renews');
      assert.equal(await repo.claimRun(week, 'A', 60_000), true);
      assert.equal(await repo.runState(week), 'running');

      await new Promise((r) => setTimeout(r, 400)); // A's lease expires mid-run
      assert.equal(await repo.tryAcquireLease('test-lease', 'B', 300), true);
      assert.equal(
        await repo.claimRun(week, 'B', 60_000),
        false,
        'the run is marked: B does not run it again',
      );

      // A dies without finishing: once its heartbeat is stale, B takes the run over.
      await new Promise((r) => setTimeout(r, 250));
      assert.equal(await repo.claimRun(week, 'B', 200), true);
      await repo.finishRun(week, 'A', 9); // too late: the run is B's now
      assert.equal(await repo.runState(week), 'running');
      await repo.finishRun(week, 'B', 2);
      assert.equal(await repo.runState(week), 'finished');
      assert.equal(
        await repo.claimRun(week, 'A', 0),
        false,
        'a finished run is never claimed again',
      );
      const [row] = await queryRows<{ holder: string; attempts: number; orgs_built: number }>(
        db.url,
        'SELECT holder, attempts, orgs_built FROM digest_runs WHERE week_start = ?',
        [week],
      );
      assert.deepEqual(
        { ...row, attempts: Number(row!.attempts), orgs_built: Number(row!.orgs_built) },
        { holder: 'B', attempts: 2, orgs_built: 2 },
      );
      await repo.releaseLease('test-lease', 'B');
      assert.equal(
        await repo.tryAcquireLease('test-lease', 'A', 300),
        true,
        'a released lease is free at once',
      );
    } finally {
      await repo.close();
    }
  });

  it("when this replica's clock steps past the end of the week, then the database's clock decides and the current week is not built before it ends", async () => {
    const repo = await MysqlDigestRepository.open(db.url, testLogger);
    const built: string[] = [];
    const scheduler = new WeeklyDigestScheduler(
      {
        store: repo,
        build: async (_orgId, weekStart) => built.push(weekStart),
        backlog: async () => 0,
        metrics: new DigestMetrics(),
        logger: testLogger,
      },
      {
        holder: 'clock-test',
        tickMs: 60_000,
        offsetMinutes: 0,
        leaseTtlMs: 1_000,
        runStaleMs: 60_000,
        maxLagWaitMs: 0,
      },
    );
    const thisWeek = lastCompleteWeek(addDaysToDate(new Date(), 7));
    // An hour after the current week ends, by this process's clock only.
    mock.timers.enable({ apis: ['Date'], now: weekEndInstant(thisWeek).getTime() + 3_600_000 });
    try {
      await scheduler.tick();
    } finally {
      mock.timers.reset();
      await repo.close();
    }
    assert.notEqual(await runStateOf(db.url, thisWeek), 'finished');
    assert.ok(!built.includes(thisWeek), `built ${built.join(', ')}`);
  });
});

function addDaysToDate(at: Date, days: number): Date {
  return new Date(at.getTime() + days * 24 * 3_600_000);
}

async function runStateOf(url: string, weekStart: string): Promise<string> {
  const rows = await queryRows<{ finished_at: string | null }>(
    url,
    'SELECT finished_at FROM digest_runs WHERE week_start = ?',
    [weekStart],
  );
  return rows.length === 0 ? 'none' : rows[0]!.finished_at ? 'finished' : 'running';
}
