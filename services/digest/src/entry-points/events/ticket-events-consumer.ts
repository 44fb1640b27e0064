import type { Logger } from '@support-agent/shared';
import { parseTicketEvent, type TicketEvent } from '../../domain/events.js';
import type {
  AggregateStore,
  ApplyOutcome,
  BatchHandler,
  Disposition,
  EventDelivery,
  TicketEventSource,
} from '../../domain/ports.js';
import type { DigestMetrics } from '../metrics.js';

const RETRY_BASE_MS = 500;
const RETRY_MAX_MS = 30_000;

/**
 * Handles deliveries of ticket events taken together: created/triaged/status_changed
 * are applied to the aggregates in one transaction (exactly once per event id, by the
 * store), other types are acknowledged and skipped, malformed ones dropped (logged).
 * When the batch fails, each event is applied on its own, so one bad event cannot hold
 * back the others; a failure (database down) is retried with back-off: an event is
 * acknowledged only once it is applied.
 */
export function createAggregateHandler(
  store: AggregateStore,
  metrics: DigestMetrics,
  logger: Logger,
): BatchHandler {
  return async (deliveries) => {
    const dispositions: Disposition[] = [];
    const batch: Array<{ index: number; delivery: EventDelivery; event: TicketEvent }> = [];
    deliveries.forEach((delivery, index) => {
      if (delivery.attempt > 1) metrics.inc('digest_events_redelivered_total');
      const parsed = parseTicketEvent(delivery.data);
      if (parsed.kind === 'event') {
        batch.push({ index, delivery, event: parsed.event });
        return;
      }
      dispositions[index] = parsed.kind === 'ignored' ? ACK : dropMalformed(parsed.reason);
      if (parsed.kind === 'malformed') {
        metrics.inc('digest_events_dropped_total');
        logger.error(
          { reason: parsed.reason, attempt: delivery.attempt, bytes: delivery.data.length },
          'dropping malformed ticket event',
        );
      }
    });
    if (batch.length === 0) return dispositions;
    try {
      const outcomes = await store.applyEvents(batch.map((b) => b.event));
      batch.forEach((b, i) => {
        countOutcome(outcomes[i]!, b.event, metrics, logger);
        dispositions[b.index] = ACK;
      });
    } catch (err) {
      if (batch.length === 1) {
        dispositions[batch[0]!.index] = retryLater(err, batch[0]!, metrics, logger);
      } else {
        logger.warn(
          { err: (err as Error).message, events: batch.length },
          'applying a batch of ticket events failed; applying them one by one',
        );
        for (const b of batch) dispositions[b.index] = await applyAlone(store, b, metrics, logger);
      }
    }
    return dispositions;
  };
}

const ACK: Disposition = { kind: 'ack' };

function dropMalformed(reason: string): Disposition {
  return { kind: 'drop', reason };
}

async function applyAlone(
  store: AggregateStore,
  b: { delivery: EventDelivery; event: TicketEvent },
  metrics: DigestMetrics,
  logger: Logger,
): Promise<Disposition> {
  try {
    countOutcome(await store.applyEvent(b.event), b.event, metrics, logger);
    return ACK;
  } catch (err) {
    return retryLater(err, b, metrics, logger);
  }
}

function countOutcome(
  outcome: ApplyOutcome,
  event: TicketEvent,
  metrics: DigestMetrics,
  logger: Logger,
): void {
  if (outcome === 'applied') {
    metrics.inc('digest_events_processed_total');
    return;
  }
  metrics.inc('digest_events_duplicate_total');
  logger.debug({ eventId: event.id, type: event.type }, 'ticket event applied before; skipped');
}

function retryLater(
  err: unknown,
  b: { delivery: EventDelivery; event: TicketEvent },
  metrics: DigestMetrics,
  logger: Logger,
): Disposition {
  metrics.inc('digest_events_failed_total');
  const delayMs = Math.min(RETRY_MAX_MS, RETRY_BASE_MS * 2 ** Math.min(10, b.delivery.attempt - 1));
  logger.warn(
    {
      err: (err as Error).message,
      eventId: b.event.id,
      attempt: b.delivery.attempt,
      retryInMs: delayMs,
    },
    'applying a ticket event failed; will retry',
  );
  return { kind: 'retry', delayMs };
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
    this.source.start(createAggregateHandler(this.store, this.metrics, this.logger));
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
