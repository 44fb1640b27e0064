// The one durable pull consumer of the stream, used by every service that reads ticket events.
import type { Consumer, JsMsg, NatsConnection } from 'nats';
import {
  redactUrl,
  sleepUnlessAborted,
  traceHeadersOf,
  withConsumerSpan,
  type Logger,
} from '@support-agent/shared';
import { consumerConfig, consumerUpdate, STREAM_NAME, type DurableConsumer } from './contract.js';
import {
  dispatch,
  type DeliveryHandler,
  type Disposition,
  type InvalidEventHook,
  type TicketEventSource,
} from './delivery.js';
import {
  connectNats,
  drainBounded,
  ensureTicketsStream,
  isAlreadyCreated,
  isMissingConsumer,
  isNotFound,
} from './jetstream.js';

export interface JetStreamConsumerOptions {
  consumer: DurableConsumer;
  /** JetStream redelivers a message not acknowledged within this (progress is signalled meanwhile). */
  ackWaitMs: number;
  /** Messages handled at the same time (one pull each). */
  concurrency: number;
  /** Replicas of the stream if this consumer ends up creating it. */
  replicas: number;
  /** How long one pull waits for a message; also the longest stop() waits for an idle pull. */
  pullExpiresMs?: number;
}

const RECONNECT_MAX_MS = 5_000;
/** Consecutive pull failures after which stream and consumer are checked (and recreated) again. */
const REBIND_AFTER_FAILURES = 3;

/**
 * Ticket events from a durable pull consumer (settings: contract.ts). Each of `concurrency`
 * workers pulls one message at a time, signals progress while it is handled (a slow handler
 * never causes a redelivery), then acks, naks with the handler's delay, or terminates it.
 * stop() lets the messages in hand finish, hands a message pulled meanwhile back with a nak,
 * and drains the connection. Only NATS 2.9 features are used.
 */
export class JetStreamTicketConsumer implements TicketEventSource {
  private nc: NatsConnection | undefined;
  private consumer: Consumer | undefined;
  private rebinding: Promise<void> | undefined;
  private stopping = false;
  private running: Promise<void> | undefined;
  private readonly wake = new AbortController();
  private readonly name: string;

  constructor(
    private readonly url: string,
    private readonly logger: Logger,
    private readonly options: JetStreamConsumerOptions,
  ) {
    this.name = options.consumer.name;
  }

  start(handle: DeliveryHandler, onInvalid?: InvalidEventHook): void {
    this.running ??= this.run(handle, onInvalid).catch((err: unknown) => {
      this.logger.error(
        { err, consumer: this.name },
        'ticket events consumer stopped unexpectedly',
      );
    });
  }

  async stop(): Promise<void> {
    this.stopping = true;
    this.wake.abort();
    await this.running;
    const nc = this.nc;
    this.nc = undefined;
    if (nc) await drainBounded(nc, 2_000);
  }

  /** num_pending + num_ack_pending of the durable consumer; undefined while NATS cannot say. */
  async backlog(): Promise<number | undefined> {
    const nc = this.nc;
    if (!nc || nc.isClosed() || !this.consumer) return undefined;
    try {
      const info = await (await nc.jetstreamManager()).consumers.info(STREAM_NAME, this.name);
      return info.num_pending + info.num_ack_pending;
    } catch {
      return undefined;
    }
  }

  private async run(handle: DeliveryHandler, onInvalid?: InvalidEventHook): Promise<void> {
    if (!(await this.connectAndBind())) return;
    await Promise.all(
      Array.from({ length: this.options.concurrency }, () => this.work(handle, onInvalid)),
    );
  }

  /** Connects (retrying until it works or stop() is called) and binds the consumer. */
  private async connectAndBind(): Promise<boolean> {
    for (let attempt = 1; !this.stopping; attempt++) {
      try {
        this.nc ??= await connectNats(this.url, this.name, {
          maxReconnectAttempts: -1,
          reconnectTimeWait: 500,
          timeout: 5_000,
        });
        await this.bind(this.nc);
        this.logger.info(
          { nats: redactUrl(this.url), consumer: this.name },
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

  /** Makes sure stream and consumer exist (creating them when missing) and binds to the consumer. */
  private async bind(nc: NatsConnection): Promise<void> {
    const jsm = await nc.jetstreamManager();
    await ensureTicketsStream(jsm, {
      replicas: this.options.replicas,
      update: false,
      logger: this.logger,
    });
    const wanted = consumerConfig(this.options.consumer, this.options.ackWaitMs);
    try {
      const change = consumerUpdate(
        (await jsm.consumers.info(STREAM_NAME, this.name)).config,
        wanted,
      );
      if (change) await jsm.consumers.update(STREAM_NAME, this.name, change);
    } catch (err) {
      if (!isNotFound(err)) throw err;
      try {
        await jsm.consumers.add(STREAM_NAME, wanted);
        this.logger.info({ consumer: this.name }, 'created the durable consumer');
      } catch (addErr) {
        // Another replica created it at the same moment, with the same settings.
        if (!isAlreadyCreated(addErr)) throw addErr;
      }
    }
    this.consumer = await nc.jetstream().consumers.get(STREAM_NAME, this.name);
  }

  /**
   * Binds again after the consumer or stream went missing (deleted, or a server that lost its
   * store); shared by all workers, so concurrent failures cause one rebind.
   */
  private rebind(): Promise<void> {
    this.rebinding ??= (async () => {
      const nc = this.nc;
      try {
        if (nc && !nc.isClosed()) await this.bind(nc);
      } catch (err) {
        this.logger.debug({ err: (err as Error).message }, 'binding the consumer again failed');
      } finally {
        this.rebinding = undefined;
      }
    })();
    return this.rebinding;
  }

  private async work(handle: DeliveryHandler, onInvalid?: InvalidEventHook): Promise<void> {
    let failures = 0;
    while (!this.stopping) {
      let msg: JsMsg | null;
      try {
        msg = await this.consumer!.next({ expires: this.options.pullExpiresMs ?? 2_000 });
        failures = 0;
      } catch (err) {
        failures++;
        if (this.stopping) break;
        if (failures === 1 || failures % 20 === 0) {
          this.logger.warn(
            { err: (err as Error).message, failures, consumer: this.name },
            'pulling a ticket event failed; retrying',
          );
        }
        // A deleted consumer shows up as an occasional 404 between empty pulls: rebind at once.
        if (isMissingConsumer(err) || failures % REBIND_AFTER_FAILURES === 0) await this.rebind();
        await this.sleep(Math.min(RECONNECT_MAX_MS, 250 * failures));
        continue;
      }
      if (!msg) continue;
      if (this.stopping) {
        msg.nak(); // deliver it again at once, to whoever runs next
        break;
      }
      await this.deliver(msg, handle, onInvalid);
    }
  }

  private async deliver(
    msg: JsMsg,
    handle: DeliveryHandler,
    onInvalid: InvalidEventHook | undefined,
  ): Promise<void> {
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
          'messaging.consumer.group.name': this.name,
        },
        () =>
          dispatch(msg.string(), msg.info.deliveryCount, handle, {
            consumer: this.name,
            logger: this.logger,
            onInvalid,
          }),
      );
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
          msg.term();
          return;
      }
    } catch (err) {
      // The message comes back after the ack wait; handlers are idempotent by event id.
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
