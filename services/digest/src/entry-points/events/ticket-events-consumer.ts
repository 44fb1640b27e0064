import type { Logger } from '@support-agent/shared';
import type { DeliveryHandler, TicketEventSource } from '@support-agent/events';
import type { AggregateStore } from '../../domain/ports.js';
import type { DigestMetrics } from '../metrics.js';

const RETRY_BASE_MS = 500;
const RETRY_MAX_MS = 30_000;

/**
 * Handles one delivery of a valid ticket event (the consumer terminates invalid ones and
 * skips unknown types): it is applied to the aggregates (exactly once per event id, by the
 * store), and a failure (database down) retried with back-off: an event is acknowledged only
 * once it is applied.
 */
export function createAggregateHandler(
  store: AggregateStore,
  metrics: DigestMetrics,
  logger: Logger,
): DeliveryHandler {
  return async ({ event, attempt }) => {
    if (attempt > 1) metrics.inc('digest_events_redelivered_total');
    try {
      const outcome = await store.applyEvent(event);
      if (outcome === 'applied') metrics.inc('digest_events_processed_total');
      else {
        metrics.inc('digest_events_duplicate_total');
        logger.debug(
          { eventId: event.id, type: event.type },
          'ticket event applied before; skipped',
        );
      }
      return { kind: 'ack' };
    } catch (err) {
      metrics.inc('digest_events_failed_total');
      const delayMs = Math.min(RETRY_MAX_MS, RETRY_BASE_MS * 2 ** Math.min(10, attempt - 1));
      logger.warn(
        { err: (err as Error).message, eventId: event.id, attempt, retryInMs: delayMs },
        'applying a ticket event failed; will retry',
      );
      return { kind: 'retry', delayMs };
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
    this.source.start(createAggregateHandler(this.store, this.metrics, this.logger), () =>
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
