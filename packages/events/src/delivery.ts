// What both consumers (JetStream and the embedded file tail) share: the port a service's
// handler implements, and the one path from a message body to a disposition.
import type { Logger } from '@support-agent/shared';
import { invalidEvents } from './metrics.js';
import { parseTicketEvent, type TicketEvent } from './schemas.js';

/** One delivery of a valid event. */
export interface TicketEventDelivery {
  event: TicketEvent;
  /** 1 on first delivery, then 2, 3, … */
  attempt: number;
}

/** What to do with a delivery once handled. */
export type Disposition =
  | { kind: 'ack' }
  /** Deliver again after the delay. */
  | { kind: 'retry'; delayMs: number }
  /** Never deliver again (permanently rejected); the handler logs why. */
  | { kind: 'drop'; reason: string };

export type DeliveryHandler = (delivery: TicketEventDelivery) => Promise<Disposition>;

/** Called for each event that fails validation (the service's own metrics count it too). */
export type InvalidEventHook = (reason: string) => void;

/** A durable stream of ticket events: the JetStream consumer or its embedded twin. */
export interface TicketEventSource {
  /**
   * Starts handing valid events to `handle`. An event that fails validation is terminated
   * (never redelivered), logged with its id and counted; one of a type the contract does not
   * know is acknowledged and skipped.
   */
  start(handle: DeliveryHandler, onInvalid?: InvalidEventHook): void;
  /** Stops fetching, lets the deliveries in hand finish, closes the connection. */
  stop(): Promise<void>;
  /** Events not handled yet (pending plus unacknowledged; bytes for the file); undefined when unknown. */
  backlog(): Promise<number | undefined>;
}

/** When a handler throws (a bug: handlers return their failures), the event comes back after this. */
const THROWN_RETRY_MS = 5_000;

/** Parses and validates one message body, then lets `handle` decide; never throws. */
export async function dispatch(
  body: string,
  attempt: number,
  handle: DeliveryHandler,
  context: {
    consumer: string;
    logger: Logger;
    onInvalid: InvalidEventHook | undefined;
    /** The consumer's subject filter, where no broker applied it (the embedded file). */
    accepts?: (subject: string) => boolean;
  },
): Promise<Disposition> {
  const parsed = parseTicketEvent(body);
  if (parsed.kind === 'ignored') return { kind: 'ack' };
  const type = parsed.kind === 'event' ? parsed.event.type : parsed.type;
  if (type !== undefined && context.accepts && !context.accepts(type)) return { kind: 'ack' };
  if (parsed.kind === 'malformed') {
    invalidEvents().inc({ client: context.consumer });
    context.onInvalid?.(parsed.reason);
    context.logger.error(
      { eventId: parsed.id, reason: parsed.reason, attempt, bytes: body.length },
      'terminating an invalid ticket event',
    );
    return { kind: 'drop', reason: parsed.reason };
  }
  try {
    return await handle({ event: parsed.event, attempt });
  } catch (err) {
    context.logger.error({ err, eventId: parsed.event.id }, 'ticket event handler threw');
    return { kind: 'retry', delayMs: THROWN_RETRY_MS };
  }
}
