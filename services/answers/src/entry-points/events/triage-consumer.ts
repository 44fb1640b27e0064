import { AppError, type Logger } from '@support-agent/shared';
import { describe } from '../../domain/generate-answer.js';
import type { Disposition, EventDelivery, TicketEventSource } from '../../domain/ports.js';
import { ticketCreatedEvent, triageTicket, type TriageDeps } from '../../domain/triage.js';
import { answersMetrics } from '../../metrics.js';

const RETRY_BASE_MS = 1_000;
const RETRY_MAX_MS = 30_000;

/**
 * Handles one delivery of a ticket event: tickets.created is triaged and
 * acknowledged only once ApplyTriage succeeded; other event types are skipped;
 * a malformed event or one tickets rejects for good is dropped (logged); any
 * other failure is retried with back-off.
 */
export function createTriageHandler(
  deps: TriageDeps,
  logger: Logger,
): (d: EventDelivery) => Promise<Disposition> {
  return async (delivery) => {
    let json: unknown;
    try {
      json = JSON.parse(delivery.data);
    } catch {
      return drop(logger, 'event is not JSON', delivery);
    }
    if ((json as { type?: unknown } | null)?.type !== 'tickets.created') return { kind: 'ack' };
    const parsed = ticketCreatedEvent.safeParse(json);
    if (!parsed.success)
      return drop(
        logger,
        `malformed tickets.created event: ${parsed.error.issues[0]?.message}`,
        delivery,
      );
    const event = parsed.data;
    try {
      const result = await triageTicket(deps, event, delivery.attempt);
      answersMetrics.triageEvents.inc({ outcome: result.answer });
      return { kind: 'ack' };
    } catch (err) {
      if (err instanceof AppError && (err.code === 'not_found' || err.code === 'invalid_request')) {
        return drop(logger, `tickets rejected the triage: ${err.message}`, delivery, event.id);
      }
      const delayMs = Math.min(
        RETRY_MAX_MS,
        RETRY_BASE_MS * 2 ** Math.min(10, delivery.attempt - 1),
      );
      logger.warn(
        {
          err: describe(err),
          eventId: event.id,
          ticketId: event.ticket_id,
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

function drop(
  logger: Logger,
  reason: string,
  delivery: EventDelivery,
  eventId?: string,
): Disposition {
  answersMetrics.triageEvents.inc({ outcome: 'dropped' });
  logger.error(
    { reason, eventId, attempt: delivery.attempt, bytes: delivery.data.length },
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

  start(): void {
    this.source.start(createTriageHandler(this.deps, this.logger));
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
