// The one durable pull consumer of the stream, used by every service that reads ticket events.
import { Events, type Consumer, type JsMsg, type NatsConnection } from 'nats';
import {
  redactUrl,
  sleepUnlessAborted,
  traceHeadersOf,
  withConsumerSpan,
  Wakeup,
  type Logger,
} from '@support-agent/shared';
import { consumerConfig, consumerUpdate, STREAM_NAME, type DurableConsumer } from './contract.js';
import {
  dispatch,
  dispatchBatch,
  type BatchDeliveryHandler,
  type DeliveryHandler,
  type DispatchContext,
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
  /** Handler calls running at the same time (workers). */
  concurrency: number;
  /**
   * Most events one handler call gets from startBatches() (what is waiting, up to this); start()
   * hands them over one per call. Default 1.
   */
  batchSize?: number;
  /**
   * A batch handler's worker that finds fewer than batchSize events waiting waits up to this
   * long for more before it takes them (fewer, larger batches when events trickle in). Default 0.
   */
  lingerMs?: number;
  /** Replicas of the stream if this consumer ends up creating it. */
  replicas: number;
  /** How long one pull waits for messages; also the longest stop() waits for an idle pull. */
  pullExpiresMs?: number;
}

const RECONNECT_MAX_MS = 5_000;
/** Consecutive pull failures after which stream and consumer are checked (and recreated) again. */
const REBIND_AFTER_FAILURES = 3;

/** What the workers call: each event on its own (its own span), or a batch in one call. */
type Handling =
  { kind: 'each'; handle: DeliveryHandler } | { kind: 'batch'; handle: BatchDeliveryHandler };

/**
 * Ticket events from a durable pull consumer (settings: contract.ts). One pull at a time asks
 * for as many messages as there is room for (twice what the workers take at once, asked again
 * once half is free), so a backlog costs one pull request per many messages; the messages
 * wait in a local queue, `concurrency` workers take what is waiting (one, or up to batchSize
 * for a batch handler), and progress is signalled for every message held, so a slow handler
 * or a long queue never causes a redelivery. Each is then acknowledged (no reply awaited: a
 * lost acknowledgement means one redelivery, which handlers absorb by event id), naked with
 * the handler's delay, or terminated. stop() lets the messages in hand finish, hands those
 * waiting back with a nak, and drains the connection. Only NATS 2.9 features are used.
 */
export class JetStreamTicketConsumer implements TicketEventSource {
  private nc: NatsConnection | undefined;
  private consumer: Consumer | undefined;
  private rebinding: Promise<void> | undefined;
  private stopping = false;
  private running: Promise<void> | undefined;
  private readonly wake = new AbortController();
  private readonly name: string;
  private readonly batchSize: number;
  /** Pulled and not settled yet (queued or being handled). */
  private readonly held = new Set<JsMsg>();
  /** Pulled and not handed to a worker yet. */
  private readonly queued: JsMsg[] = [];
  private readonly arrived = new Wakeup();
  /** A worker is waiting for a batch to fill; the others leave the queue to it. */
  private lingering = false;
  private wakeScheduled = false;
  private readonly freed = new Wakeup();

  constructor(
    private readonly url: string,
    private readonly logger: Logger,
    private readonly options: JetStreamConsumerOptions,
  ) {
    this.name = options.consumer.name;
    this.batchSize = Math.max(1, options.batchSize ?? 1);
  }

  start(handle: DeliveryHandler, onInvalid?: InvalidEventHook): void {
    this.begin({ kind: 'each', handle }, onInvalid);
  }

  startBatches(handle: BatchDeliveryHandler, onInvalid?: InvalidEventHook): void {
    this.begin({ kind: 'batch', handle }, onInvalid);
  }

  async stop(): Promise<void> {
    this.stopping = true;
    this.wake.abort();
    this.arrived.wakeAll();
    this.freed.wakeAll();
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

  private begin(handling: Handling, onInvalid: InvalidEventHook | undefined): void {
    this.running ??= this.run(handling, onInvalid).catch((err: unknown) => {
      this.logger.error(
        { err, consumer: this.name },
        'ticket events consumer stopped unexpectedly',
      );
    });
  }

  private async run(handling: Handling, onInvalid: InvalidEventHook | undefined): Promise<void> {
    if (!(await this.connectAndBind())) return;
    const context: DispatchContext = { consumer: this.name, logger: this.logger, onInvalid };
    const progress = setInterval(
      () => this.held.forEach((m) => m.working()),
      Math.max(500, this.options.ackWaitMs / 3),
    );
    try {
      const workers = Array.from({ length: this.options.concurrency }, () =>
        this.work(handling, context),
      );
      await this.pullUntilStopped();
      await Promise.all(workers);
    } finally {
      clearInterval(progress);
      // Pulled but never handed out: deliver again at once, to whoever runs next.
      for (const msg of this.queued.splice(0)) msg.nak();
      this.held.clear();
    }
  }

  /** Connects (retrying until it works or stop() is called) and binds the consumer. */
  private async connectAndBind(): Promise<boolean> {
    for (let attempt = 1; !this.stopping; attempt++) {
      try {
        if (!this.nc) {
          this.nc = await connectNats(this.url, this.name, {
            maxReconnectAttempts: -1,
            reconnectTimeWait: 500,
            timeout: 5_000,
          });
          void this.forgetQueuedOnDisconnect(this.nc);
        }
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

  /**
   * While disconnected nothing can be settled: the messages not handed out yet are let go (the
   * server redelivers them after the ack wait, or at once if it lost them), so no more work is
   * started than the batches in hand.
   */
  private async forgetQueuedOnDisconnect(nc: NatsConnection): Promise<void> {
    for await (const status of nc.status()) {
      if (status.type !== Events.Disconnect) continue;
      for (const msg of this.queued.splice(0)) this.held.delete(msg);
      this.freed.wakeAll();
    }
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

  /** The messages the workers may hold: twice what they take at once. */
  private get capacity(): number {
    return 2 * this.options.concurrency * this.batchSize;
  }

  /**
   * Pulls while not stopping: when at most half the capacity is held, one pull for the room
   * left, whose messages are queued as they arrive (the pull ends when full or expired).
   * Messages arriving after stop() go back at once.
   */
  private async pullUntilStopped(): Promise<void> {
    let failures = 0;
    while (!this.stopping) {
      if (this.held.size > this.capacity / 2) {
        await this.freed.wait();
        continue;
      }
      try {
        const messages = await this.consumer!.fetch({
          max_messages: this.capacity - this.held.size,
          expires: this.options.pullExpiresMs ?? 2_000,
        });
        for await (const msg of messages) {
          if (this.stopping) {
            msg.nak();
            continue;
          }
          this.held.add(msg);
          this.queued.push(msg);
          this.wakeWorkersSoon();
        }
        failures = 0;
      } catch (err) {
        failures++;
        if (this.stopping) break;
        if (failures === 1 || failures % 20 === 0) {
          this.logger.warn(
            { err: (err as Error).message, failures, consumer: this.name },
            'pulling ticket events failed; retrying',
          );
        }
        // A deleted consumer shows up as an occasional 404 between empty pulls: rebind at once.
        if (isMissingConsumer(err) || failures % REBIND_AFTER_FAILURES === 0) await this.rebind();
        await this.sleep(Math.min(RECONNECT_MAX_MS, 250 * failures));
      }
    }
    this.arrived.wakeAll();
  }

  /**
   * Wakes the workers once the messages that came in together are all queued (a pull's
   * messages are yielded one by one), so a batch handler gets them in one call.
   */
  private wakeWorkersSoon(): void {
    if (this.wakeScheduled) return;
    this.wakeScheduled = true;
    setImmediate(() => {
      this.wakeScheduled = false;
      this.arrived.wakeAll();
    });
  }

  /**
   * Takes what is queued (one, or up to batchSize for a batch handler, after lingering for
   * more: one worker at a time) until stop().
   */
  private async work(handling: Handling, context: DispatchContext): Promise<void> {
    const take = handling.kind === 'batch' ? this.batchSize : 1;
    const lingerMs = handling.kind === 'batch' ? (this.options.lingerMs ?? 0) : 0;
    while (!this.stopping) {
      if (this.queued.length === 0 || (this.lingering && this.queued.length < take)) {
        await this.arrived.wait();
        continue;
      }
      if (lingerMs > 0 && this.queued.length < take) {
        this.lingering = true;
        await this.sleep(lingerMs);
        this.lingering = false;
        if (this.queued.length === 0) continue; // let go at a disconnect
      }
      const msgs = this.queued.splice(0, take);
      if (this.queued.length > 0) this.arrived.wakeAll();
      try {
        if (handling.kind === 'each') await this.deliver(msgs[0]!, handling.handle, context);
        else await this.deliverBatch(msgs, handling.handle, context);
      } finally {
        for (const msg of msgs) this.held.delete(msg);
        this.freed.wakeAll();
      }
    }
  }

  private async deliver(
    msg: JsMsg,
    handle: DeliveryHandler,
    context: DispatchContext,
  ): Promise<void> {
    // Continues the trace of the request that produced the event (traceparent header).
    const disposition = await withConsumerSpan(
      `${msg.subject} process`,
      traceHeadersOf(msg.headers),
      this.spanAttributes(msg.subject),
      () => dispatch(msg.string(), msg.info.deliveryCount, handle, context),
    );
    this.settle(msg, disposition);
  }

  /** One handler call for the batch; each event brings its own span for the handler to use. */
  private async deliverBatch(
    msgs: JsMsg[],
    handle: BatchDeliveryHandler,
    context: DispatchContext,
  ): Promise<void> {
    const dispositions = await dispatchBatch(
      msgs.map((m) => ({
        body: m.string(),
        attempt: m.info.deliveryCount,
        // Continues the trace of the request that produced the event (traceparent header).
        traced: <T>(fn: () => Promise<T>) =>
          withConsumerSpan(
            `${m.subject} process`,
            traceHeadersOf(m.headers),
            this.spanAttributes(m.subject),
            fn,
          ),
      })),
      handle,
      context,
    );
    msgs.forEach((msg, i) => this.settle(msg, dispositions[i]!));
  }

  private spanAttributes(subject: string) {
    return {
      'messaging.system': 'nats',
      'messaging.destination.name': subject,
      'messaging.consumer.group.name': this.name,
    };
  }

  /**
   * Acknowledges, naks with the handler's delay, or terminates. Nothing waits for the server:
   * the client writes these with whatever else is going out, and one that is lost (a dropped
   * connection) only means the message comes back after the ack wait, which handlers absorb.
   */
  private settle(msg: JsMsg, disposition: Disposition): void {
    try {
      switch (disposition.kind) {
        case 'ack':
          msg.ack();
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
