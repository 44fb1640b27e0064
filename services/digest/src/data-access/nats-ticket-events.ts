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
  redactUrl,
  traceHeadersOf,
  withConsumerSpan,
  type Logger,
  sleepUnlessAborted,
} from '@support-agent/shared';
import type { BatchHandler, Disposition, TicketEventSource } from '../domain/ports.js';
import { ensureTicketsStream, FILTER_SUBJECT, isNotFound, STREAM_NAME } from './nats-stream.js';

export const DEFAULT_CONSUMER = 'digest-aggregator';

export interface JetStreamSourceOptions {
  /** Durable consumer name (tests use their own). */
  consumerName: string;
  /** Batches applied at the same time (one pull each). */
  concurrency: number;
  /** Most events one pull takes, handed to the handler together (one transaction). */
  batchSize: number;
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
 * Each worker takes what is waiting, up to `batchSize` events, in one pull (a
 * backlog is worked off with few round trips), or else waits for the next one;
 * stop() lets the batch in hand finish and hands undelivered ones back with a nak.
 * NATS 2.9 features only.
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

  start(handle: BatchHandler): void {
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

  private async run(handle: BatchHandler): Promise<void> {
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

  private async work(handle: BatchHandler): Promise<void> {
    let failures = 0;
    while (!this.stopping) {
      let msgs: JsMsg[];
      try {
        msgs = await this.pull();
        failures = 0;
      } catch (err) {
        failures++;
        if (this.stopping) break;
        if (failures === 1 || failures % 20 === 0) {
          this.logger.warn(
            { err: (err as Error).message, failures },
            'pulling ticket events failed; retrying',
          );
        }
        await this.sleep(Math.min(RECONNECT_MAX_MS, 250 * failures));
        // The server may have lost its store (or the consumer was deleted): recreate both.
        if (failures % REBIND_AFTER_FAILURES === 0 && !this.stopping) await this.rebind();
        continue;
      }
      if (msgs.length === 0) continue;
      if (this.stopping) {
        for (const msg of msgs) msg.nak(); // redeliver at once, to whoever runs next
        break;
      }
      await this.deliver(msgs, handle);
    }
  }

  /**
   * The events waiting, up to batchSize, without waiting (no_wait); when there are none,
   * one pull that waits up to pullExpiresMs for the next event (and reports a missing consumer).
   */
  private async pull(): Promise<JsMsg[]> {
    const waiting = await this.fetchWaiting();
    if (waiting.length > 0) return waiting;
    const msg = await this.consumer!.next({ expires: this.options.pullExpiresMs });
    return msg ? [msg] : [];
  }

  private async fetchWaiting(): Promise<JsMsg[]> {
    if (this.options.batchSize <= 1 || !this.nc || this.nc.isClosed()) return [];
    const msgs: JsMsg[] = [];
    const batch = this.nc.jetstream().fetch(STREAM_NAME, this.options.consumerName, {
      batch: this.options.batchSize,
      no_wait: true,
    });
    // A no_wait pull has no expiry of its own: if its answer is lost (NATS restarting), stop
    // waiting; messages that arrive later are redelivered after the ack wait.
    const timer = setTimeout(() => batch.stop(), this.options.pullExpiresMs);
    try {
      for await (const msg of batch) msgs.push(msg);
    } finally {
      clearTimeout(timer);
    }
    return msgs;
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

  private async deliver(msgs: JsMsg[], handle: BatchHandler): Promise<void> {
    const progress = setInterval(
      () => msgs.forEach((m) => m.working()),
      Math.max(500, this.options.ackWaitMs / 3),
    );
    let dispositions: Disposition[];
    try {
      // Continues the trace of the request that produced the (first) event (traceparent header).
      dispositions = await withConsumerSpan(
        `${msgs[0]!.subject} process`,
        traceHeadersOf(msgs[0]!.headers),
        {
          'messaging.system': 'nats',
          'messaging.destination.name': msgs[0]!.subject,
          'messaging.consumer.group.name': this.options.consumerName,
          'messaging.batch.message_count': msgs.length,
        },
        () => handle(msgs.map((msg) => ({ data: msg.string(), attempt: msg.info.deliveryCount }))),
      );
    } catch (err) {
      this.logger.error({ err }, 'ticket event handler threw');
      dispositions = msgs.map(() => ({ kind: 'retry', delayMs: 1_000 }));
    } finally {
      clearInterval(progress);
    }
    await Promise.all(msgs.map((msg, i) => this.settle(msg, dispositions[i]!)));
  }

  private async settle(msg: JsMsg, disposition: Disposition): Promise<void> {
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
