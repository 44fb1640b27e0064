import { sleep, type Logger } from '@support-agent/shared';
import type { AggregateStore, ScheduleStore } from '../domain/ports.js';
import { dueWeek } from '../domain/schedule.js';
import type { DigestMetrics } from './metrics.js';

export const SCHEDULER_LEASE = 'weekly-digest';
const BUILD_ATTEMPTS = 3;

export interface SchedulerOptions {
  /** Identity of this replica in the lease and run records. */
  holder: string;
  tickMs: number;
  /** Minutes after a week ends at which its run is due. */
  offsetMinutes: number;
  leaseTtlMs: number;
  runStaleMs: number;
  /** Longest wait for the event consumer to catch up once a run is due. */
  maxLagWaitMs: number;
}

export interface SchedulerDeps {
  store: ScheduleStore & Pick<AggregateStore, 'orgsWithTickets'>;
  /** Builds and stores one organization's digest of the week. */
  build: (orgId: string, weekStart: string) => Promise<unknown>;
  /** Unapplied ticket events, undefined when unknown. */
  backlog: () => Promise<number | undefined>;
  metrics: DigestMetrics;
  logger: Logger;
}

/**
 * The weekly run: every tick, each replica checks whether the most recent due
 * week has been run. One replica at a time holds the lease; the week's
 * `digest_runs` record is checked and marked in one transaction, so the run
 * happens once even if the lease expires mid-run. Every organization that had
 * tickets that week gets its digest. A run waits (up to maxLagWaitMs) for the
 * event consumer to catch up, so late events are still counted.
 */
export class WeeklyDigestScheduler {
  private timer: NodeJS.Timeout | undefined;
  private ticking: Promise<void> | undefined;
  private stopping = false;
  private readonly finishedWeeks = new Set<string>();
  private readonly waitingSince = new Map<string, number>();

  constructor(
    private readonly deps: SchedulerDeps,
    private readonly options: SchedulerOptions,
  ) {}

  start(): void {
    this.schedule(Math.min(this.options.tickMs, 1_000));
  }

  /** Stops ticking; a run in progress stops after the organization being built and is left for a takeover. */
  async stop(): Promise<void> {
    this.stopping = true;
    clearTimeout(this.timer);
    await this.ticking;
  }

  private schedule(ms: number): void {
    if (this.stopping) return;
    this.timer = setTimeout(() => {
      this.ticking = this.tick()
        .catch((err: unknown) =>
          this.deps.logger.warn({ err: (err as Error).message }, 'digest scheduler tick failed'),
        )
        .finally(() => this.schedule(this.options.tickMs));
    }, ms);
  }

  /** One check of the due run; public for tests. */
  async tick(): Promise<void> {
    const { store, logger } = this.deps;
    // The store's clock, not this process's: a replica whose clock stepped ahead across the
    // end of a week must not build that week's digest while its tickets are still coming.
    const now = await store.clock();
    const { weekStart, dueAt } = dueWeek(now, this.options.offsetMinutes);
    if (this.finishedWeeks.has(weekStart)) return;
    if ((await store.runState(weekStart)) === 'finished') {
      this.finishedWeeks.add(weekStart);
      return;
    }
    const backlog = await this.deps.backlog();
    if (backlog !== 0) {
      const since = this.waitingSince.get(weekStart) ?? now.getTime();
      this.waitingSince.set(weekStart, since);
      if (now.getTime() - since < this.options.maxLagWaitMs) {
        logger.debug(
          { weekStart, backlog },
          'weekly digest due; waiting for the event consumer to catch up',
        );
        return;
      }
      logger.warn(
        { weekStart, backlog, dueAt },
        'weekly digest: event consumer still behind; building anyway',
      );
    }
    const { holder, leaseTtlMs } = this.options;
    if (!(await store.tryAcquireLease(SCHEDULER_LEASE, holder, leaseTtlMs))) return;
    try {
      if (!(await store.claimRun(weekStart, holder, this.options.runStaleMs))) return;
      await this.run(weekStart);
    } finally {
      await store.releaseLease(SCHEDULER_LEASE, holder).catch(() => undefined);
    }
  }

  private async run(weekStart: string): Promise<void> {
    const { store, logger, metrics } = this.deps;
    const { holder, leaseTtlMs } = this.options;
    const heartbeat = setInterval(
      () => {
        void Promise.all([
          store.tryAcquireLease(SCHEDULER_LEASE, holder, leaseTtlMs),
          store.heartbeatRun(weekStart, holder),
        ]).catch((err: unknown) =>
          logger.warn({ err: (err as Error).message }, 'weekly digest heartbeat failed'),
        );
      },
      Math.max(50, Math.floor(leaseTtlMs / 3)),
    );
    try {
      const orgs = await store.orgsWithTickets(weekStart);
      logger.info({ weekStart, orgs: orgs.length, holder }, 'weekly digest run started');
      let built = 0;
      let failed = 0;
      for (const orgId of orgs) {
        if (this.stopping) {
          logger.info(
            { weekStart, built },
            'weekly digest run interrupted by shutdown; another replica takes over',
          );
          return;
        }
        if (await this.buildWithRetries(orgId, weekStart)) built++;
        else failed++;
      }
      if (failed > 0) {
        // Left unfinished: once its heartbeat is stale the run is claimed and done again (builds replace).
        logger.error(
          { weekStart, built, failed },
          'weekly digest run incomplete; it will be retried',
        );
        return;
      }
      await store.finishRun(weekStart, holder, built);
      this.finishedWeeks.add(weekStart);
      metrics.inc('digest_schedule_runs_total');
      logger.info({ weekStart, built }, 'weekly digest run finished');
    } finally {
      clearInterval(heartbeat);
    }
  }

  private async buildWithRetries(orgId: string, weekStart: string): Promise<boolean> {
    for (let attempt = 1; attempt <= BUILD_ATTEMPTS; attempt++) {
      try {
        await this.deps.build(orgId, weekStart);
        this.deps.metrics.inc('digest_builds_total', { trigger: 'schedule' });
        return true;
      } catch (err) {
        this.deps.metrics.inc('digest_build_failures_total', { trigger: 'schedule' });
        this.deps.logger.warn(
          { err: (err as Error).message, orgId, weekStart, attempt },
          'scheduled digest build failed',
        );
        if (attempt < BUILD_ATTEMPTS && !this.stopping) await sleep(500 * attempt);
      }
    }
    return false;
  }
}
