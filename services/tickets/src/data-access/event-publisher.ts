import {
  connect,
  Events,
  headers,
  nanos,
  RetentionPolicy,
  StorageType,
  type JetStreamClient,
  type NatsConnection,
  type NatsError,
  type StreamConfig,
} from 'nats';
import {
  JsonlJournal,
  NATS_CLIENT_OPTIONS,
  redactUrl,
  startProducerSpan,
  type Logger,
} from '@support-agent/shared';
import type { OutboxMessage } from '../domain/events.js';
import type { EventPublisher, PublishReport } from '../domain/ports.js';

export const STREAM_NAME = 'TICKETS';
export const STREAM_SUBJECTS = ['tickets.>'];
/** Redeliveries from the outbox within this window are dropped by JetStream (Nats-Msg-Id). */
export const DUPLICATE_WINDOW_MS = 2 * 60 * 1000;

/** NATS/JetStream API error codes (server/errors.json). */
const JS_STREAM_NOT_FOUND = 10059;
const JS_STREAM_NAME_IN_USE = 10058;

export interface JetStreamPublisherOptions {
  /** How long to wait for each PubAck. */
  publishTimeoutMs?: number;
  /** Stream replicas when the stream is created (1 for a single server, 3 in a cluster). */
  replicas?: number;
}

/**
 * Publishes outbox messages to the JetStream stream TICKETS with
 * Nats-Msg-Id = event id, so a message the relay sends twice is stored once.
 *
 * Connecting never blocks start-up: the first connection is retried in the
 * background until it succeeds (like `waitOnFirstConnect`, but cancellable at
 * shutdown), later ones by the client itself (`maxReconnectAttempts: -1`).
 * While disconnected, publish() reports failure at once and the outbox keeps
 * the events until NATS is back.
 */
export class JetStreamPublisher implements EventPublisher {
  private nc: NatsConnection | undefined;
  private js: JetStreamClient | undefined;
  private connected = false;
  private streamReady = false;
  private closed = false;
  private readonly connecting: Promise<void>;
  private wakeConnectLoop: (() => void) | undefined;
  private readonly publishTimeoutMs: number;
  private readonly replicas: number;

  constructor(
    private readonly url: string,
    private readonly logger: Logger,
    options: JetStreamPublisherOptions = {},
  ) {
    this.publishTimeoutMs = options.publishTimeoutMs ?? 5_000;
    this.replicas = options.replicas ?? 1;
    this.connecting = this.connectLoop();
  }

  async publish(messages: OutboxMessage[]): Promise<PublishReport> {
    const js = this.js;
    if (!js || !this.connected) return { published: [], error: new Error('NATS is not connected') };
    if (!this.streamReady) {
      try {
        await this.ensureStream();
      } catch (err) {
        return { published: [], error: err };
      }
    }
    const encoder = new TextEncoder();
    // Concurrent publishes on one connection keep their order on the wire.
    const results = await Promise.allSettled(
      messages.map((m) => {
        // Continues the trace of the request that recorded the event (no-op without tracing).
        const trace = startProducerSpan(`${m.subject} publish`, m.traceparent, {
          'messaging.system': 'nats',
          'messaging.destination.name': m.subject,
          'messaging.message.id': m.eventId,
        });
        const h = headers();
        for (const [k, v] of Object.entries(trace.headers)) h.set(k, v);
        return js
          .publish(m.subject, encoder.encode(m.payload), {
            msgID: m.eventId,
            timeout: this.publishTimeoutMs,
            headers: h,
          })
          .finally(() => trace.span.end());
      }),
    );
    const report: PublishReport = { published: [] };
    results.forEach((r, i) => {
      if (r.status === 'fulfilled') {
        report.published.push(messages[i]!.eventId);
        if (r.value.duplicate)
          this.logger.debug({ eventId: messages[i]!.eventId }, 'event was already on the stream');
      } else if (report.error === undefined) {
        report.error = r.reason;
      }
    });
    // "No responders": the stream is gone (e.g. a NATS server with a fresh store); recreate it.
    if (report.error !== undefined && (report.error as NatsError).code === '503')
      this.streamReady = false;
    return report;
  }

  async close(): Promise<void> {
    this.closed = true;
    this.wakeConnectLoop?.();
    await this.connecting;
    const nc = this.nc;
    if (!nc || nc.isClosed()) return;
    // Drain flushes what was sent; it cannot finish while disconnected, so bound it.
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([
      nc.drain().catch(() => undefined),
      new Promise<void>((resolve) => (timer = setTimeout(resolve, 5_000))),
    ]);
    clearTimeout(timer);
    if (!nc.isClosed()) await nc.close();
  }

  private async connectLoop(): Promise<void> {
    let delayMs = 250;
    let attempt = 0;
    while (!this.closed) {
      attempt++;
      try {
        const nc = await connect({
          servers: this.url.split(',').map((s) => s.trim()),
          name: 'tickets',
          ...NATS_CLIENT_OPTIONS,
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
        this.js = nc.jetstream();
        this.connected = true;
        this.logger.info({ nats: redactUrl(this.url) }, 'connected to NATS');
        void this.watchStatus(nc);
        await this.ensureStream().catch((err: unknown) =>
          this.logger.warn(
            { err },
            'could not create the TICKETS stream yet; will retry on publish',
          ),
        );
        return;
      } catch (err) {
        if (attempt === 1 || attempt % 20 === 0) {
          this.logger.warn(
            { err, attempt, nats: redactUrl(this.url) },
            'NATS unreachable; events wait in the outbox',
          );
        }
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, delayMs);
          this.wakeConnectLoop = () => {
            clearTimeout(timer);
            resolve();
          };
        });
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

  /** Creates the stream, or brings subjects and duplicate window of an existing one up to date. */
  private async ensureStream(): Promise<void> {
    const nc = this.nc;
    if (!nc) throw new Error('NATS is not connected');
    const jsm = await nc.jetstreamManager();
    const wanted: Partial<StreamConfig> = {
      name: STREAM_NAME,
      subjects: STREAM_SUBJECTS,
      storage: StorageType.File,
      retention: RetentionPolicy.Limits,
      duplicate_window: nanos(DUPLICATE_WINDOW_MS),
      num_replicas: this.replicas,
    };
    try {
      const info = await jsm.streams.info(STREAM_NAME);
      const c = info.config;
      if (
        c.duplicate_window !== wanted.duplicate_window ||
        STREAM_SUBJECTS.some((s) => !c.subjects.includes(s))
      ) {
        await jsm.streams.update(STREAM_NAME, {
          ...c,
          subjects: [...new Set([...c.subjects, ...STREAM_SUBJECTS])],
          duplicate_window: wanted.duplicate_window!,
        });
        this.logger.info({ stream: STREAM_NAME }, 'stream configuration updated');
      }
    } catch (err) {
      if ((err as NatsError).api_error?.err_code !== JS_STREAM_NOT_FOUND) throw err;
      try {
        await jsm.streams.add(wanted);
        this.logger.info({ stream: STREAM_NAME }, 'stream created');
      } catch (addErr) {
        // Another replica created it first.
        if ((addErr as NatsError).api_error?.err_code !== JS_STREAM_NAME_IN_USE) throw addErr;
      }
    }
    this.streamReady = true;
  }
}

/**
 * The embedded broker: appends each envelope as a line of DATA_DIR/events/tickets.jsonl
 * (fsynced), once per event id, for the other embedded services to tail.
 */
export class JsonlEventPublisher implements EventPublisher {
  private readonly journal: JsonlJournal<unknown>;
  private readonly seen = new Set<string>();

  constructor(path: string) {
    this.journal = new JsonlJournal<unknown>(path);
    this.journal.replay((record) => {
      const id = (record as { id?: unknown }).id;
      if (typeof id === 'string') this.seen.add(id);
    });
  }

  async publish(messages: OutboxMessage[]): Promise<PublishReport> {
    const fresh = messages.filter((m) => !this.seen.has(m.eventId));
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
