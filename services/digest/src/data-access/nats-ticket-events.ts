import {
  AckPolicy,
  connect,
  DeliverPolicy,
  nanos,
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
import type { DeliveryHandler, Disposition, TicketEventSource } from '../domain/ports.js';
import { ensureTicketsStream, FILTER_SUBJECT, isNotFound, STREAM_NAME } from './nats-stream.js';

export const DEFAULT_CONSUMER = 'digest-aggregator';

export interface JetStreamSourceOptions {
  /** Durable consumer name (tests use their own). */
  consumerName: string;
  /** Events applied at the same time (one pull each). */
  concurrency: number;
  /** Replicas of the stream if this service ends up creating it. */
  replicas: number;
  ackWaitMs: number;
  /** How long one pull waits for a message; also the longest stop() waits for an idle pull. */
  pullExpiresMs: number;
}

const RECONNECT_MAX_MS = 5_000;
/** Consecutive pull failures after which the stream and consumer are checked (and recreated) again. */
const REBIND_AFTER_FAILURES = 3;

/**
 * Ticket events from JetStream: the durable pull consumer `digest-aggregator` on
 * stream TICKETS (filter `tickets.>`, explicit ack, unlimited redelivery: an
 * event is only acknowledged once it is applied, or dropped when malformed).
 * Each worker pulls one message at a time; stop() lets the in-flight message
 * finish and hands undelivered ones back with a nak. NATS 2.9 features only.
 */
export class JetStreamTicketEvents implements TicketEventSource {
  private nc: NatsConnection | undefined;
  private jsm: JetStreamManager | undefined;
  private consumer: Consumer | undefined;
  private stopping = false;
  private running: Promise<void> | undefined;
  private readonly wake = new AbortController();

  constructor(
    private readonly url: string,
    private readonly logger: Logger,
    private readonly options: JetStreamSourceOptions,
  ) {}

  start(handle: DeliveryHandler): void {
    this.running ??= this.run(handle).catch((err: unknown) => {
      this.logger.error({ err }, 'ticket events consumer stopped unexpectedly');
    });
  }

  async stop(): Promise<void> {
    this.stopping = true;
    this.wake.abort();
    await this.running;
    const nc = this.nc;
    this.nc = undefined;
    if (nc && !nc.isClosed()) {
      let timer: NodeJS.Timeout | undefined;
      // Drain cannot finish while disconnected: bound it.
      await Promise.race([
        nc.drain().catch(() => undefined),
        new Promise<void>((resolve) => (timer = setTimeout(resolve, 2_000))),
      ]);
      clearTimeout(timer);
      if (!nc.isClosed()) await nc.close().catch(() => undefined);
    }
  }

  async backlog(): Promise<number | undefined> {
    const jsm = this.jsm;
    if (!jsm || !this.consumer || this.nc?.isClosed()) return undefined;
    try {
      const info = await jsm.consumers.info(STREAM_NAME, this.options.consumerName);
      return info.num_pending + info.num_ack_pending;
    } catch {
      return undefined;
    }
  }

  private async run(handle: DeliveryHandler): Promise<void> {
    if (!(await this.bind())) return;
    await Promise.all(Array.from({ length: this.options.concurrency }, () => this.work(handle)));
  }

  /** Connects (retrying until it works or stop() is called) and makes sure the stream and consumer exist. */
  private async bind(): Promise<boolean> {
    for (let attempt = 1; !this.stopping; attempt++) {
      try {
        this.nc ??= await connect({
          servers: this.url.split(',').map((s) => s.trim()),
          name: 'digest',
          ...NATS_CLIENT_OPTIONS,
          maxReconnectAttempts: -1,
          reconnectTimeWait: 500,
          timeout: 5_000,
        });
        const jsm = await this.nc.jetstreamManager();
        await ensureTicketsStream(jsm, this.options.replicas, this.logger);
        await this.ensureConsumer(jsm);
        this.consumer = await this.nc
          .jetstream()
          .consumers.get(STREAM_NAME, this.options.consumerName);
        this.jsm = jsm;
        this.logger.info(
          { nats: redactUrl(this.url), consumer: this.options.consumerName },
          'ticket events consumer bound',
        );
        return true;
      } catch (err) {
        if (attempt === 1 || attempt % 20 === 0) {
          this.logger.warn(
            { err: (err as Error).message, attempt, nats: redactUrl(this.url) },
            'JetStream not ready; retrying',
          );
        }
        await this.sleep(Math.min(RECONNECT_MAX_MS, 250 * attempt));
      }
    }
    return false;
  }

  private async ensureConsumer(jsm: JetStreamManager): Promise<void> {
    const name = this.options.consumerName;
    const ackWait = nanos(this.options.ackWaitMs);
    try {
      const info = await jsm.consumers.info(STREAM_NAME, name);
      if (info.config.filter_subject !== FILTER_SUBJECT) {
        throw new Error(
          `consumer ${name} filters ${info.config.filter_subject ?? '(nothing)'}, expected ${FILTER_SUBJECT}`,
        );
      }
      if (info.config.ack_wait !== ackWait)
        await jsm.consumers.update(STREAM_NAME, name, { ack_wait: ackWait });
      return;
    } catch (err) {
      if (!isNotFound(err)) throw err;
    }
    try {
      await jsm.consumers.add(STREAM_NAME, {
        durable_name: name,
        ack_policy: AckPolicy.Explicit,
        ack_wait: ackWait,
        max_deliver: -1,
        deliver_policy: DeliverPolicy.All,
        filter_subject: FILTER_SUBJECT,
        max_ack_pending: 1_000,
      });
      this.logger.info({ consumer: name }, 'created the durable consumer');
    } catch (err) {
      // Another replica created it at the same moment, with the same config.
      if (!/already (in use|exists)/i.test((err as Error).message)) throw err;
    }
  }

  private async work(handle: DeliveryHandler): Promise<void> {
    let failures = 0;
    while (!this.stopping) {
      let msg: JsMsg | null;
      try {
        msg = await this.consumer!.next({ expires: this.options.pullExpiresMs });
        failures = 0;
      } catch (err) {
        failures++;
        if (this.stopping) break;
        if (failures === 1 || failures % 20 === 0) {
          this.logger.warn(
            { err: (err as Error).message, failures },
            'pulling a ticket event failed; retrying',
          );
        }
        await this.sleep(Math.min(RECONNECT_MAX_MS, 250 * failures));
        // The server may have lost its store (or the consumer was deleted): recreate both.
        if (failures % REBIND_AFTER_FAILURES === 0 && !this.stopping) await this.rebind();
        continue;
      }
      if (!msg) continue;
      if (this.stopping) {
        msg.nak(); // redeliver at once, to whoever runs next
        break;
      }
      await this.deliver(msg, handle);
    }
  }

  private async rebind(): Promise<void> {
    const nc = this.nc;
    if (!nc || nc.isClosed()) return;
    try {
      const jsm = await nc.jetstreamManager();
      await ensureTicketsStream(jsm, this.options.replicas, this.logger);
      await this.ensureConsumer(jsm);
      this.consumer = await nc.jetstream().consumers.get(STREAM_NAME, this.options.consumerName);
    } catch (err) {
      this.logger.debug({ err: (err as Error).message }, 'rebinding the consumer failed');
    }
  }

  private async deliver(msg: JsMsg, handle: DeliveryHandler): Promise<void> {
    const progress = setInterval(() => msg.working(), Math.max(500, this.options.ackWaitMs / 3));
    let disposition: Disposition;
    try {
      // Continues the trace of the request that produced the event (traceparent header).
      disposition = await withConsumerSpan(
        `${msg.subject} process`,
        traceHeadersOf(msg.headers),
        {
          'messaging.system': 'nats',
          'messaging.destination.name': msg.subject,
          'messaging.consumer.group.name': this.options.consumerName,
        },
        () => handle({ data: msg.string(), attempt: msg.info.deliveryCount }),
      );
    } catch (err) {
      this.logger.error({ err }, 'ticket event handler threw');
      disposition = { kind: 'retry', delayMs: 1_000 };
    } finally {
      clearInterval(progress);
    }
    switch (disposition.kind) {
      case 'ack':
        try {
          await msg.ackAck({ timeout: 5_000 });
        } catch (err) {
          // Redelivered later, and then recognised by its event id.
          this.logger.warn({ err: (err as Error).message, seq: msg.seq }, 'ack not confirmed');
        }
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
  }

  private sleep(ms: number): Promise<void> {
    return sleepUnlessAborted(ms, this.wake.signal);
  }
}
