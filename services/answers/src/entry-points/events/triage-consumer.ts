import { AppError, type Logger } from '@support-agent/shared';
import {
  eachOf,
  type DeliveryHandler,
  type Disposition,
  type TicketEventDelivery,
  type TicketEventSource,
} from '@support-agent/events';
import { describe } from '../../domain/generate-answer.js';
import { triageTicket, type TriageDeps } from '../../domain/triage.js';
import { answersMetrics } from '../../metrics.js';

const RETRY_BASE_MS = 1_000;
const RETRY_MAX_MS = 30_000;

/**
 * Handles one delivery of a valid ticket event (the consumer terminates invalid ones):
 * tickets.created is triaged and acknowledged only once ApplyTriage succeeded; other event
 * types are skipped; one tickets rejects for good is dropped (logged); any other failure is
 * retried with back-off.
 */
export function createTriageHandler(deps: TriageDeps, logger: Logger): DeliveryHandler {
  return async (delivery) => {
    const { event } = delivery;
    if (event.type !== 'tickets.created') return { kind: 'ack' };
    try {
      const result = await triageTicket(deps, event, delivery.attempt);
      answersMetrics.triageEvents.inc({ outcome: result.answer });
      return { kind: 'ack' };
    } catch (err) {
      if (err instanceof AppError && (err.code === 'not_found' || err.code === 'invalid_request')) {
        return drop(logger, `tickets rejected the triage: ${err.message}`, delivery);
      }
      const delayMs = Math.min(
        RETRY_MAX_MS,
        RETRY_BASE_MS * 2 ** Math.min(10, delivery.attempt - 1),
      );
      logger.warn(
        {
          err: describe(err),
          eventId: event.id,
          ticketId: event.ticket_number,
          attempt: delivery.attempt,
          retryInMs: delayMs,
        },
        'triage failed; will retry',
      );
      answersMetrics.triageEvents.inc({ outcome: 'retried' });
      return { kind: 'retry', delayMs };
    }
  };
}

function drop(logger: Logger, reason: string, delivery: TicketEventDelivery): Disposition {
  answersMetrics.triageEvents.inc({ outcome: 'dropped' });
  logger.error(
    { reason, eventId: delivery.event.id, attempt: delivery.attempt },
    'dropping ticket event',
  );
  return { kind: 'drop', reason };
}

/** The triage pipeline: a durable event source feeding the triage handler. */
export class TriageConsumer {
  constructor(
    private readonly source: TicketEventSource,
    private readonly deps: TriageDeps,
    private readonly logger: Logger,
  ) {}

  /** Triages the events waiting in batches: each event on its own, all of a batch at once. */
  start(): void {
    this.source.startBatches(eachOf(createTriageHandler(this.deps, this.logger)), () =>
      answersMetrics.triageEvents.inc({ outcome: 'dropped' }),
    );
  }

  /** Stops taking events and waits for the ones being triaged. */
  stop(): Promise<void> {
    return this.source.stop();
  }

  /** Refreshes triage_consumer_pending (-1 when the backlog cannot be known). */
  async refreshLag(): Promise<void> {
    const backlog = await this.source.backlog().catch(() => undefined);
    answersMetrics.triageConsumerPending.set(backlog ?? -1);
  }
}
