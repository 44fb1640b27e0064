import {
  AckPolicy,
  connect,
  DeliverPolicy,
  nanos,
  RetentionPolicy,
  StorageType,
  type Consumer,
  type JetStreamManager,
  type JsMsg,
  type NatsConnection,
} from 'nats';
import {
  NATS_CLIENT_OPTIONS,
  redactUrl,
  traceHeadersOf,
  withConsumerSpan,
  type Logger,
  sleepUnlessAborted,
} from '@support-agent/shared';
import type { Disposition, EventDelivery, TicketEventSource } from '../domain/ports.js';

export const STREAM = 'TICKETS';
export const STREAM_SUBJECTS = ['tickets.>'];
export const TRIAGE_CONSUMER = 'answers-triage';
export const TRIAGE_SUBJECT = 'tickets.created';

export interface JetStreamSourceOptions {
  /** Deliveries handled at the same time (one pull each). */
  concurrency: number;
  /** Replicas of the stream if this service ends up creating it. */
  replicas: number;
  ackWaitMs?: number;
  maxDeliver?: number;
  /** How long one pull waits for a message before asking again. */
  pullExpiresMs?: number;
}

const DEFAULT_ACK_WAIT_MS = 30_000;
const DEFAULT_MAX_DELIVER = 10_000;
const DUPLICATE_WINDOW_MS = 2 * 60_000;
const RECONNECT_MAX_MS = 5_000;

/**
 * Ticket events from JetStream: the durable pull consumer `answers-triage` on
 * stream TICKETS (filter `tickets.created`, explicit ack, ack wait 30 s). Each of
 * `concurrency` workers pulls one message at a time, signals progress while it
 * is handled (so a slow LLM never causes a redelivery), then acks, naks with a
 * delay, or terminates it. Only NATS 2.9 features are used.
 */
export class JetStreamTicketEvents implements TicketEventSource {
  private nc: NatsConnection | undefined;
  private consumer: Consumer | undefined;
  private rebinding: Promise<void> | undefined;
  private stopping = false;
  private running: Promise<void> | undefined;
  private readonly wake = new AbortController();

  constructor(
    private readonly url: string,
    private readonly logger: Logger,
    private readonly options: JetStreamSourceOptions,
  ) {}

  start(handle: (delivery: EventDelivery) => Promise<Disposition>): void {
    this.running ??= this.run(handle).catch((err: unknown) => {
      this.logger.error({ err }, 'triage consumer stopped unexpectedly');
    });
  }

  async stop(): Promise<void> {
    this.stopping = true;
    this.wake.abort();
    await this.running;
    const nc = this.nc;
    this.nc = undefined;
    if (nc && !nc.isClosed()) await nc.drain().catch(() => nc.close());
  }

  /** num_pending + num_ack_pending of the durable consumer; undefined while NATS cannot say. */
  async backlog(): Promise<number | undefined> {
    const nc = this.nc;
    if (!nc || nc.isClosed() || !this.consumer) return undefined;
    try {
      const info = await (await nc.jetstreamManager()).consumers.info(STREAM, TRIAGE_CONSUMER);
      return info.num_pending + info.num_ack_pending;
    } catch {
      return undefined;
    }
  }

  private async run(handle: (delivery: EventDelivery) => Promise<Disposition>): Promise<void> {
    this.consumer = await this.connectAndBind();
    if (!this.consumer) return;
    const workers = Array.from({ length: this.options.concurrency }, () => this.work(handle));
    await Promise.all(workers);
  }

  /**
   * Makes sure stream and consumer exist again (someone deleted them, or JetStream lost
   * them); shared by all workers, so concurrent failures cause one rebind.
   */
  private rebind(): Promise<void> {
    this.rebinding ??= (async () => {
      try {
        const jsm = await this.nc!.jetstreamManager();
        await this.ensureStream(jsm);
        await this.ensureConsumer(jsm);
        this.consumer = await this.nc!.jetstream().consumers.get(STREAM, TRIAGE_CONSUMER);
        this.logger.info({ consumer: TRIAGE_CONSUMER }, 'triage consumer bound again');
      } catch (err) {
        this.logger.warn(
          { err: (err as Error).message },
          'binding the triage consumer again failed',
        );
      } finally {
        this.rebinding = undefined;
      }
    })();
    return this.rebinding;
  }

  /** Connects (retrying until it works or stop() is called) and makes sure the stream and consumer exist. */
  private async connectAndBind(): Promise<Consumer | undefined> {
    for (let attempt = 1; !this.stopping; attempt++) {
      try {
        this.nc ??= await connect({
          servers: this.url.split(',').map((s) => s.trim()),
          name: 'answers-triage',
          ...NATS_CLIENT_OPTIONS,
          maxReconnectAttempts: -1,
          reconnectTimeWait: 1_000,
          timeout: 5_000,
        });
        const jsm = await this.nc.jetstreamManager();
        await this.ensureStream(jsm);
        await this.ensureConsumer(jsm);
        const consumer = await this.nc.jetstream().consumers.get(STREAM, TRIAGE_CONSUMER);
        this.logger.info(
          { nats: redactUrl(this.url), consumer: TRIAGE_CONSUMER },
          'triage consumer bound',
        );
        return consumer;
      } catch (err) {
        const waitMs = Math.min(RECONNECT_MAX_MS, 250 * attempt);
        this.logger.warn(
          { err: (err as Error).message, attempt, nats: redactUrl(this.url) },
          'JetStream not ready; retrying',
        );
        await this.sleep(waitMs);
      }
    }
    return undefined;
  }

  /**
   * Creates TICKETS when missing, with the settings the tickets service creates it with
   * (services/tickets/src/data-access/event-publisher.ts); never changes an existing stream.
   */
  private async ensureStream(jsm: JetStreamManager): Promise<void> {
    try {
      await jsm.streams.info(STREAM);
      return;
    } catch (err) {
      if (!isNotFound(err)) throw err;
    }
    try {
      await jsm.streams.add({
        name: STREAM,
        subjects: STREAM_SUBJECTS,
        storage: StorageType.File,
        retention: RetentionPolicy.Limits,
        num_replicas: this.options.replicas,
        duplicate_window: nanos(DUPLICATE_WINDOW_MS),
      });
      this.logger.info({ stream: STREAM }, 'created the JetStream stream');
    } catch (err) {
      // The tickets service created it meanwhile.
      if (apiErrorCode(err) !== JS_STREAM_NAME_IN_USE) throw err;
    }
  }

  private async ensureConsumer(jsm: JetStreamManager): Promise<void> {
    const ackWait = nanos(this.options.ackWaitMs ?? DEFAULT_ACK_WAIT_MS);
    const maxDeliver = this.options.maxDeliver ?? DEFAULT_MAX_DELIVER;
    try {
      const info = await jsm.consumers.info(STREAM, TRIAGE_CONSUMER);
      if (info.config.filter_subject !== TRIAGE_SUBJECT) {
        throw new Error(
          `consumer ${TRIAGE_CONSUMER} filters ${info.config.filter_subject}, expected ${TRIAGE_SUBJECT}`,
        );
      }
      if (info.config.ack_wait !== ackWait || info.config.max_deliver !== maxDeliver) {
        await jsm.consumers.update(STREAM, TRIAGE_CONSUMER, {
          ack_wait: ackWait,
          max_deliver: maxDeliver,
        });
      }
      return;
    } catch (err) {
      if (!isNotFound(err)) throw err;
    }
    try {
      await jsm.consumers.add(STREAM, {
        durable_name: TRIAGE_CONSUMER,
        ack_policy: AckPolicy.Explicit,
        ack_wait: ackWait,
        max_deliver: maxDeliver,
        deliver_policy: DeliverPolicy.All,
        filter_subject: TRIAGE_SUBJECT,
        max_ack_pending: 1_000,
      });
    } catch (err) {
      // Another replica created it at the same moment, with the same config.
      if (!/already (in use|exists)/i.test((err as Error).message)) throw err;
    }
  }

  private async work(handle: (delivery: EventDelivery) => Promise<Disposition>): Promise<void> {
    let failures = 0;
    while (!this.stopping) {
      let msg: JsMsg | null;
      try {
        msg = await this.consumer!.next({ expires: this.options.pullExpiresMs ?? 2_000 });
        failures = 0;
      } catch (err) {
        failures++;
        if (!this.stopping) {
          this.logger.warn(
            { err: (err as Error).message, failures },
            'pulling a ticket event failed; retrying',
          );
          // A deleted consumer shows up as an occasional 404 between empty pulls: rebind at once.
          if (!this.stopping && (isMissingConsumer(err) || failures % 3 === 0)) await this.rebind();
          await this.sleep(Math.min(RECONNECT_MAX_MS, 250 * failures));
        }
        continue;
      }
      if (!msg) continue;
      if (this.stopping) {
        msg.nak(); // deliver it again at once, to whoever runs next
        break;
      }
      await this.deliver(msg, handle);
    }
  }

  private async deliver(
    msg: JsMsg,
    handle: (delivery: EventDelivery) => Promise<Disposition>,
  ): Promise<void> {
    const ackWait = this.options.ackWaitMs ?? DEFAULT_ACK_WAIT_MS;
    const progress = setInterval(() => msg.working(), Math.max(1_000, ackWait / 3));
    let disposition: Disposition;
    try {
      // Continues the trace of the request that created the ticket (traceparent header).
      disposition = await withConsumerSpan(
        `${msg.subject} process`,
        traceHeadersOf(msg.headers),
        {
          'messaging.system': 'nats',
          'messaging.destination.name': msg.subject,
          'messaging.consumer.group.name': TRIAGE_CONSUMER,
        },
        () => handle({ data: msg.string(), attempt: msg.info.deliveryCount }),
      );
    } catch (err) {
      disposition = { kind: 'retry', delayMs: 5_000 };
      this.logger.error({ err }, 'triage handler threw');
    } finally {
      clearInterval(progress);
    }
    try {
      switch (disposition.kind) {
        case 'ack':
          await msg.ackAck({ timeout: 5_000 });
          return;
        case 'retry':
          msg.nak(disposition.delayMs);
          return;
        case 'drop':
          // Plain +TERM: NATS 2.9 ignores "+TERM <reason>" (2.10+) and redelivers the message.
          // The reason is logged by the handler.
          msg.term();
          return;
      }
    } catch (err) {
      // The message comes back after the ack wait; ApplyTriage and the ledger are idempotent by event id.
      this.logger.warn(
        { err: (err as Error).message, seq: msg.seq, disposition: disposition.kind },
        'could not settle a ticket event with JetStream',
      );
    }
  }

  private sleep(ms: number): Promise<void> {
    return sleepUnlessAborted(ms, this.wake.signal);
  }
}

/** NATS/JetStream API error codes (server/errors.json). */
const JS_STREAM_NOT_FOUND = 10059;
const JS_CONSUMER_NOT_FOUND = 10014;
const JS_STREAM_NAME_IN_USE = 10058;

function apiErrorCode(err: unknown): number | undefined {
  return (err as { api_error?: { err_code?: number } })?.api_error?.err_code;
}

/** What a pull reports when its consumer or stream is gone. */
function isMissingConsumer(err: unknown): boolean {
  const e = err as { code?: string | number; message?: string };
  return (
    String(e?.code) === '404' ||
    /consumer not found|stream not found|consumer deleted/i.test(e?.message ?? '')
  );
}

function isNotFound(err: unknown): boolean {
  const code = apiErrorCode(err);
  return code === JS_STREAM_NOT_FOUND || code === JS_CONSUMER_NOT_FOUND;
}
