// The one publisher of ticket events (the tickets service's outbox relay hands it batches),
// on JetStream or, embedded, on the JSONL file the embedded consumers tail.
import { Events, headers, type NatsConnection } from 'nats';
import {
  currentTraceparent,
  JsonlJournal,
  redactUrl,
  sleepUnlessAborted,
  startProducerSpan,
  type Logger,
} from '@support-agent/shared';
import { STREAM_NAME } from './contract.js';
import { connectNats, drainBounded, ensureTicketsStream } from './jetstream.js';
import { invalidEvents } from './metrics.js';
import { PubAckInbox, PublishError, type JetStreamMessage } from './pub-acks.js';
import { parseTicketEvent, type TicketEnvelope } from './schemas.js';

/** An event on its way from the outbox to the broker: the serialized envelope, never re-encoded. */
export interface OutboxMessage {
  eventId: string;
  subject: string;
  payload: string;
  /** W3C traceparent of the request that recorded the event (tracing on), sent as a header. */
  traceparent?: string | null;
}

/** Serializes an envelope for the outbox, with the trace of the request recording it. */
export function toOutboxMessage(event: TicketEnvelope): OutboxMessage {
  return {
    eventId: event.id,
    subject: event.type,
    payload: JSON.stringify(event),
    traceparent: currentTraceparent(),
  };
}

/**
 * Outcome of handing a batch to the broker: the ids that may leave the outbox (stored by the
 * broker, or refused for good as invalid), and the first failure if any.
 */
export interface PublishReport {
  published: string[];
  error?: unknown;
}

/** Hands outbox messages to the event broker. Never throws: failures are reported. */
export interface EventPublisher {
  publish(messages: OutboxMessage[]): Promise<PublishReport>;
  close(): Promise<void>;
}

/**
 * Splits a batch into the messages that are events of the contract (subject = type, id = the
 * message id) and the ids of those that are not. The producer validated each envelope when it
 * built it; this catches an outbox row no consumer could read, which is logged, counted and
 * dropped rather than retried forever.
 */
function validate(
  messages: OutboxMessage[],
  logger: Logger,
): { valid: OutboxMessage[]; rejected: string[] } {
  const valid: OutboxMessage[] = [];
  const rejected: string[] = [];
  for (const m of messages) {
    const parsed = parseTicketEvent(m.payload);
    const reason =
      parsed.kind === 'malformed'
        ? parsed.reason
        : parsed.kind === 'ignored'
          ? `unknown type ${parsed.type}`
          : parsed.event.type !== m.subject || parsed.event.id !== m.eventId
            ? `subject ${m.subject} and id ${m.eventId} do not match the envelope`
            : undefined;
    if (reason === undefined) {
      valid.push(m);
      continue;
    }
    rejected.push(m.eventId);
    invalidEvents().inc({ client: 'publisher' });
    logger.error({ eventId: m.eventId, reason }, 'not publishing an invalid ticket event');
  }
  return { valid, rejected };
}

/** The header JetStream drops a repeated message by, within the stream's duplicate window. */
const MSG_ID_HEADER = 'Nats-Msg-Id';

export interface JetStreamPublisherOptions {
  /** How long a batch waits for its PubAcks (those still missing then count as failed). */
  publishTimeoutMs?: number;
  /** Stream replicas when the stream is created (1 for a single server, 3 in a cluster). */
  replicas?: number;
  /** The NATS connection name. */
  name?: string;
}

/**
 * Publishes outbox messages to the stream with Nats-Msg-Id = event id, so a message the relay
 * sends twice is stored once.
 *
 * Connecting never blocks start-up: the first connection is retried in the background until
 * it succeeds (like `waitOnFirstConnect`, but cancellable at shutdown), later ones by the
 * client itself (`maxReconnectAttempts: -1`). While disconnected, publish() reports failure
 * at once and the outbox keeps the events until NATS is back.
 */
export class JetStreamEventPublisher implements EventPublisher {
  private nc: NatsConnection | undefined;
  private acks: PubAckInbox | undefined;
  private connected = false;
  private streamReady = false;
  private closed = false;
  private readonly connecting: Promise<void>;
  private wakeConnectLoop: (() => void) | undefined;
  private readonly publishTimeoutMs: number;
  private readonly replicas: number;
  private readonly encoder = new TextEncoder();

  constructor(
    private readonly url: string,
    private readonly logger: Logger,
    private readonly options: JetStreamPublisherOptions = {},
  ) {
    this.publishTimeoutMs = options.publishTimeoutMs ?? 5_000;
    this.replicas = options.replicas ?? 1;
    this.connecting = this.connectLoop();
  }

  async publish(messages: OutboxMessage[]): Promise<PublishReport> {
    const acks = this.acks;
    if (!acks || !this.connected)
      return { published: [], error: new Error('NATS is not connected') };
    if (!this.streamReady) {
      try {
        await this.ensureStream();
      } catch (err) {
        return { published: [], error: err };
      }
    }
    const { valid, rejected } = validate(messages, this.logger);
    // Continues the trace of the request that recorded each event (no-op without tracing); a
    // span ends when its batch has been acknowledged.
    const traces = valid.map((m) =>
      startProducerSpan(`${m.subject} publish`, m.traceparent, {
        'messaging.system': 'nats',
        'messaging.destination.name': m.subject,
        'messaging.message.id': m.eventId,
      }),
    );
    const outgoing = valid.map((m, i): JetStreamMessage => {
      const h = headers();
      h.set(MSG_ID_HEADER, m.eventId);
      for (const [k, v] of Object.entries(traces[i]!.headers)) h.set(k, v);
      return { subject: m.subject, data: this.encoder.encode(m.payload), headers: h };
    });
    // One connection keeps the messages' order on the wire.
    const outcomes = await acks.publishAll(outgoing, this.publishTimeoutMs);
    for (const trace of traces) trace.span.end();
    const report: PublishReport = { published: rejected };
    outcomes.forEach((outcome, i) => {
      if (outcome.ok) {
        report.published.push(valid[i]!.eventId);
        if (outcome.duplicate)
          this.logger.debug({ eventId: valid[i]!.eventId }, 'event was already on the stream');
      } else if (report.error === undefined) {
        report.error = outcome.error;
      }
    });
    // "No responders": the stream is gone (e.g. a NATS server with a fresh store); recreate it.
    if (report.error instanceof PublishError && report.error.code === '503')
      this.streamReady = false;
    return report;
  }

  async close(): Promise<void> {
    this.closed = true;
    this.wakeConnectLoop?.();
    await this.connecting;
    const nc = this.nc;
    if (nc) await drainBounded(nc, 5_000);
  }

  private async connectLoop(): Promise<void> {
    let delayMs = 250;
    let attempt = 0;
    while (!this.closed) {
      attempt++;
      try {
        const nc = await connectNats(this.url, this.options.name ?? 'tickets', {
          maxReconnectAttempts: -1,
          reconnectTimeWait: 500,
          reconnectJitter: 250,
          timeout: 2_000,
        });
        if (this.closed) {
          await nc.close();
          return;
        }
        this.nc = nc;
        this.acks = new PubAckInbox(nc);
        this.connected = true;
        this.logger.info({ nats: redactUrl(this.url) }, 'connected to NATS');
        void this.watchStatus(nc);
        await this.ensureStream().catch((err: unknown) =>
          this.logger.warn({ err }, 'could not create the stream yet; will retry on publish'),
        );
        return;
      } catch (err) {
        if (attempt === 1 || attempt % 20 === 0) {
          this.logger.warn(
            { err, attempt, nats: redactUrl(this.url) },
            'NATS unreachable; events wait in the outbox',
          );
        }
        const wake = new AbortController();
        this.wakeConnectLoop = () => wake.abort();
        await sleepUnlessAborted(delayMs, wake.signal);
        delayMs = Math.min(delayMs * 2, 2_000);
      }
    }
  }

  private async watchStatus(nc: NatsConnection): Promise<void> {
    for await (const status of nc.status()) {
      if (status.type === Events.Disconnect) {
        this.connected = false;
        this.logger.warn(
          { nats: redactUrl(this.url) },
          'disconnected from NATS; events wait in the outbox',
        );
      } else if (status.type === Events.Reconnect) {
        this.connected = true;
        this.streamReady = false; // the server may have lost its store: check on next publish
        this.logger.info({ nats: redactUrl(this.url) }, 'reconnected to NATS');
      }
    }
    this.connected = false;
  }

  private async ensureStream(): Promise<void> {
    const nc = this.nc;
    if (!nc) throw new Error('NATS is not connected');
    await ensureTicketsStream(await nc.jetstreamManager(), {
      replicas: this.replicas,
      update: true,
      logger: this.logger.child({ stream: STREAM_NAME }),
    });
    this.streamReady = true;
  }
}

/**
 * The embedded twin: appends each envelope as a line of the event file (fsynced), once per
 * event id, for the embedded consumers to tail.
 */
export class JsonlEventPublisher implements EventPublisher {
  private readonly journal: JsonlJournal<unknown>;
  private readonly seen = new Set<string>();

  constructor(
    path: string,
    private readonly logger: Logger,
  ) {
    this.journal = new JsonlJournal<unknown>(path);
    this.journal.replay((record) => {
      const id = (record as { id?: unknown }).id;
      if (typeof id === 'string') this.seen.add(id);
    });
  }

  async publish(messages: OutboxMessage[]): Promise<PublishReport> {
    const { valid } = validate(messages, this.logger);
    const fresh = valid.filter((m) => !this.seen.has(m.eventId));
    try {
      this.journal.appendMany(fresh.map((m) => JSON.parse(m.payload) as unknown));
    } catch (err) {
      return { published: [], error: err };
    }
    for (const m of fresh) this.seen.add(m.eventId);
    return { published: messages.map((m) => m.eventId) };
  }

  async close(): Promise<void> {
    this.journal.close();
  }
}
