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
  /**
   * Runs `fn` in a consumer span that continues the trace of the request that produced the
   * event, so the work it causes (gRPC calls, log lines) joins that trace. A one-event handler
   * already runs in it; a batch handler calls it for work that is this event's own.
   */
  traced<T>(fn: () => Promise<T>): Promise<T>;
}

/** What to do with a delivery once handled. */
export type Disposition =
  | { kind: 'ack' }
  /** Deliver again after the delay. */
  | { kind: 'retry'; delayMs: number }
  /** Never deliver again (permanently rejected); the handler logs why. */
  | { kind: 'drop'; reason: string };

export type DeliveryHandler = (delivery: TicketEventDelivery) => Promise<Disposition>;

/**
 * Handles several deliveries together (one transaction for all of them, say): one disposition
 * per delivery, in the same order.
 */
export type BatchDeliveryHandler = (deliveries: TicketEventDelivery[]) => Promise<Disposition[]>;

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
  /**
   * The same, handing the handler up to the source's `batchSize` events at once: those that
   * are waiting, never waiting for more. Invalid and unknown events are settled as by start()
   * and never reach the handler.
   */
  startBatches(handle: BatchDeliveryHandler, onInvalid?: InvalidEventHook): void;
  /** Stops fetching, lets the deliveries in hand finish, closes the connection. */
  stop(): Promise<void>;
  /** Events not handled yet (pending plus unacknowledged; bytes for the file); undefined when unknown. */
  backlog(): Promise<number | undefined>;
}

/** When a handler throws (a bug: handlers return their failures), the event comes back after this. */
const THROWN_RETRY_MS = 5_000;

export interface DispatchContext {
  consumer: string;
  logger: Logger;
  onInvalid: InvalidEventHook | undefined;
  /** The consumer's subject filter, where no broker applied it (the embedded file). */
  accepts?: (subject: string) => boolean;
}

/** A message as it came: its body, which delivery this is, and its trace (none: untraced). */
export interface RawDelivery {
  body: string;
  attempt: number;
  traced?: TicketEventDelivery['traced'];
}

const untraced: TicketEventDelivery['traced'] = (fn) => fn();

/** Parses and validates one message body, then lets `handle` decide; never throws. */
export async function dispatch(
  body: string,
  attempt: number,
  handle: DeliveryHandler,
  context: DispatchContext,
): Promise<Disposition> {
  const parsed = admit(body, attempt, context);
  if (!('event' in parsed)) return parsed;
  try {
    return await handle({ event: parsed.event, attempt, traced: untraced });
  } catch (err) {
    context.logger.error({ err, eventId: parsed.event.id }, 'ticket event handler threw');
    return { kind: 'retry', delayMs: THROWN_RETRY_MS };
  }
}

/**
 * Parses and validates each message body, hands the valid events to `handle` in one call and
 * returns one disposition per message, in order; never throws (a handler that throws, or
 * answers for a different number of events, has each of them retried).
 */
export async function dispatchBatch(
  messages: RawDelivery[],
  handle: BatchDeliveryHandler,
  context: DispatchContext,
): Promise<Disposition[]> {
  const dispositions: Disposition[] = [];
  const valid: TicketEventDelivery[] = [];
  const slots: number[] = [];
  for (const m of messages) {
    const parsed = admit(m.body, m.attempt, context);
    if ('event' in parsed) {
      slots.push(dispositions.length);
      valid.push({ event: parsed.event, attempt: m.attempt, traced: m.traced ?? untraced });
      dispositions.push({ kind: 'retry', delayMs: THROWN_RETRY_MS });
    } else {
      dispositions.push(parsed);
    }
  }
  if (valid.length === 0) return dispositions;
  try {
    const handled = await handle(valid);
    if (handled.length !== valid.length)
      throw new Error(`${handled.length} dispositions for ${valid.length} events`);
    handled.forEach((d, i) => (dispositions[slots[i]!] = d));
  } catch (err) {
    context.logger.error(
      { err, eventIds: valid.map((d) => d.event.id) },
      'ticket event batch handler threw',
    );
  }
  return dispositions;
}

/**
 * A handler of one event as a batch handler: the events of a batch are handled concurrently,
 * each in its own span. Started together, their calls to other services leave together (HTTP/2
 * and NATS write what is sent in one tick at once) and their acknowledgements too.
 */
export function eachOf(handle: DeliveryHandler): BatchDeliveryHandler {
  return (deliveries) => Promise.all(deliveries.map((d) => d.traced(() => handle(d))));
}

/**
 * The disposition of a message no handler should see (not for this consumer, of a type the
 * contract does not know, or invalid: logged and counted), else its parsed event.
 */
function admit(
  body: string,
  attempt: number,
  context: DispatchContext,
): Disposition | { event: TicketEvent } {
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
  return { event: parsed.event };
}
