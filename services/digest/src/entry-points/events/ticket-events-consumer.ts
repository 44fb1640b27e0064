import type { Logger } from '@support-agent/shared';
import type { BatchDeliveryHandler, TicketEventSource } from '@support-agent/events';
import type { AggregateStore } from '../../domain/ports.js';
import type { DigestMetrics } from '../metrics.js';

const RETRY_BASE_MS = 500;
const RETRY_MAX_MS = 30_000;

/**
 * Handles a batch of valid ticket events (the consumer terminates invalid ones and skips
 * unknown types): they are applied to the aggregates in one transaction (exactly once per
 * event id, by the store), and a failure (database down) retries the batch's events with
 * back-off: an event is acknowledged only once it is applied.
 */
export function createAggregateHandler(
  store: AggregateStore,
  metrics: DigestMetrics,
  logger: Logger,
): BatchDeliveryHandler {
  return async (deliveries) => {
    for (const d of deliveries) if (d.attempt > 1) metrics.inc('digest_events_redelivered_total');
    try {
      // One transaction for the batch: traced as the first event's work.
      const outcomes = await deliveries[0]!.traced(() =>
        store.applyEvents(deliveries.map((d) => d.event)),
      );
      outcomes.forEach((outcome, i) => {
        if (outcome === 'applied') metrics.inc('digest_events_processed_total');
        else {
          metrics.inc('digest_events_duplicate_total');
          const { event } = deliveries[i]!;
          logger.debug(
            { eventId: event.id, type: event.type },
            'ticket event applied before; skipped',
          );
        }
      });
      return deliveries.map(() => ({ kind: 'ack' }));
    } catch (err) {
      const attempt = Math.max(...deliveries.map((d) => d.attempt));
      const delayMs = Math.min(RETRY_MAX_MS, RETRY_BASE_MS * 2 ** Math.min(10, attempt - 1));
      metrics.inc('digest_events_failed_total', {}, deliveries.length);
      logger.warn(
        {
          err: (err as Error).message,
          eventIds: deliveries.map((d) => d.event.id),
          attempt,
          retryInMs: delayMs,
        },
        'applying ticket events failed; will retry',
      );
      return deliveries.map(() => ({ kind: 'retry', delayMs }));
    }
  };
}

/** The aggregation pipeline: a durable event source feeding the aggregate handler. */
export class TicketEventsConsumer {
  private refreshing: Promise<number | undefined> | undefined;

  constructor(
    private readonly source: TicketEventSource,
    private readonly store: AggregateStore,
    private readonly metrics: DigestMetrics,
    private readonly logger: Logger,
  ) {}

  start(): void {
    this.source.startBatches(createAggregateHandler(this.store, this.metrics, this.logger), () =>
      this.metrics.inc('digest_events_dropped_total'),
    );
  }

  /** Stops pulling and waits for the event being applied. */
  stop(): Promise<void> {
    return this.source.stop();
  }

  /** Refreshes digest_consumer_pending; returns the backlog (undefined when unknown). Concurrent callers share one query. */
  refreshLag(): Promise<number | undefined> {
    this.refreshing ??= this.source
      .backlog()
      .then((backlog) => {
        this.metrics.set('digest_consumer_pending', backlog ?? -1);
        return backlog;
      })
      .finally(() => {
        this.refreshing = undefined;
      });
    return this.refreshing;
  }
}
