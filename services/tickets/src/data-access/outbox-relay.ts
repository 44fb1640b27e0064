import { DAY_MS, sleep, Wakeup, type Logger } from '@support-agent/shared';
import type { EventPublisher, OutboxStore } from '../domain/ports.js';
import { ticketsMetrics } from '../metrics.js';

export interface OutboxRelayOptions {
  /** Events per batch. */
  batchSize: number;
  /** Poll interval when idle; a local write wakes the relay earlier. */
  pollMs: number;
  /**
   * After a batch that was not full, how long the relay waits before claiming the next one, so
   * that the writes of the next few milliseconds leave together (0: at once).
   */
  lingerMs: number;
  /** Upper bound of the back-off while the broker (or the store) fails. */
  maxBackoffMs: number;
  /** Published events are deleted once older than this. */
  retentionMs: number;
  /** How often the purge of published events runs. */
  purgeEveryMs: number;
  /** How often the outbox_backlog gauge is refreshed (one count query). */
  backlogEveryMs: number;
}

export const DEFAULT_RELAY_OPTIONS: OutboxRelayOptions = {
  batchSize: 100,
  pollMs: 250,
  lingerMs: 10,
  maxBackoffMs: 2_000,
  retentionMs: DAY_MS,
  purgeEveryMs: 10 * 60 * 1000,
  backlogEveryMs: 5_000,
};

/**
 * Moves events from the outbox to the broker, forever: one loop per process, any
 * number of processes (the store hands each batch to one relay). A failure never
 * drops an event: it stays unpublished and the loop retries with back-off. Order
 * is outbox order within a batch; consumers are idempotent by event id anyway.
 */
export class OutboxRelay {
  private readonly options: OutboxRelayOptions;
  private running = false;
  private loop: Promise<void> | undefined;
  /** Ends the relay's sleep early: a local write (unless backing off) or stop(). */
  private readonly wakeup = new Wakeup();
  private pendingWake = false;
  private failures = 0;
  private lastPurgeAt = 0;
  private lastBacklogAt = 0;

  constructor(
    private readonly store: OutboxStore,
    private readonly publisher: EventPublisher,
    private readonly logger: Logger,
    options: Partial<OutboxRelayOptions> = {},
  ) {
    this.options = { ...DEFAULT_RELAY_OPTIONS, ...options };
  }

  start(): void {
    if (this.running) return;
    this.running = true;
    this.lastPurgeAt = Date.now();
    this.loop = this.run();
  }

  /** A local write recorded events: relay them now rather than at the next poll. */
  notify(): void {
    this.pendingWake = true;
    if (this.failures === 0) this.wakeup.wakeAll();
  }

  /** Stops after the batch in flight (if any) is published and marked. */
  async stop(): Promise<void> {
    this.running = false;
    this.wakeup.wakeAll();
    await this.loop;
  }

  private async run(): Promise<void> {
    while (this.running) {
      let full = false;
      try {
        this.pendingWake = false;
        const result = await this.store.relayBatch(this.options.batchSize, (messages) =>
          this.publisher.publish(messages),
        );
        if (result.published > 0) {
          ticketsMetrics.outboxPublished.inc(result.published);
          this.logger.debug({ published: result.published }, 'outbox events published');
        }
        await this.maybeRefreshBacklog();
        if (result.error !== undefined) throw result.error;
        if (this.failures > 0)
          this.logger.info({ afterFailures: this.failures }, 'outbox relay recovered');
        this.failures = 0;
        full = result.claimed >= this.options.batchSize;
        await this.maybePurge();
      } catch (err) {
        this.failures++;
        // Log the first failure and then only occasionally: an outage lasts many retries.
        if (this.failures === 1 || this.failures % 30 === 0) {
          this.logger.warn(
            { err, failures: this.failures },
            'outbox relay failed; events stay queued, retrying',
          );
        }
      }
      if (!this.running) break;
      if (this.failures > 0) {
        await this.sleep(
          Math.min(this.options.maxBackoffMs, 100 * 2 ** Math.min(this.failures, 10)),
        );
      } else if (!full && !this.pendingWake) {
        await this.sleep(this.options.pollMs);
      }
      if (!full && this.failures === 0 && this.options.lingerMs > 0 && this.running)
        await sleep(this.options.lingerMs);
    }
  }

  /** outbox_backlog, at most every backlogEveryMs (also while the broker is down: it grows then). */
  private async maybeRefreshBacklog(): Promise<void> {
    if (Date.now() - this.lastBacklogAt < this.options.backlogEveryMs) return;
    this.lastBacklogAt = Date.now();
    const backlog = await this.store.countUnpublished().catch(() => undefined);
    if (backlog !== undefined) ticketsMetrics.outboxBacklog.set(backlog);
  }

  private async maybePurge(): Promise<void> {
    if (Date.now() - this.lastPurgeAt < this.options.purgeEveryMs) return;
    this.lastPurgeAt = Date.now();
    const deleted = await this.store.purgePublished(
      new Date(Date.now() - this.options.retentionMs),
    );
    if (deleted > 0) this.logger.info({ deleted }, 'purged published outbox events');
  }

  /** Sleeps `ms` unless woken: by stop(), or by notify() when not backing off (an outage is not hammered). */
  private sleep(ms: number): Promise<void> {
    return this.wakeup.sleep(ms);
  }
}
