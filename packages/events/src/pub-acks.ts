// JetStream publishes whose acknowledgements come back on one reply subscription per
// connection. nats.js's `js.publish` makes each message a request of its own: a timer, a
// deferred, an entry in its request multiplexer, and, once the PubAck has settled the request,
// a NatsError with its stack trace to reject the already-settled promise (RequestOne.cancel):
// 2.5 % of the tickets service's CPU under the pipeline bench, for nothing. Here a batch of
// messages shares one timer and each PubAck settles its message by the reply subject's token.
import { createInbox, type Msg, type MsgHdrs, type NatsConnection } from 'nats';

/** A message on its way to the stream, with its Nats-Msg-Id among its headers. */
export interface JetStreamMessage {
  subject: string;
  data: Uint8Array;
  headers: MsgHdrs;
}

/** Why the stream did not acknowledge a message; `code` as nats.js's NatsError has it. */
export class PublishError extends Error {
  constructor(
    readonly code: string,
    message: string,
  ) {
    super(message);
    this.name = 'PublishError';
  }
}

/** What the stream said of one message: stored (or a duplicate of one stored), or an error. */
export type PubAckOutcome = { ok: true; duplicate: boolean } | { ok: false; error: Error };

interface PubAckBody {
  stream?: string;
  duplicate?: boolean;
  error?: { code?: number; err_code?: number; description?: string };
}

const decoder = new TextDecoder();

/** The outcome a reply to a JetStream publish stands for. */
export function pubAckOutcome(msg: Pick<Msg, 'data' | 'headers'>): PubAckOutcome {
  // The server's own status reply (no payload): no stream listens on the subject.
  if (msg.data.length === 0 && msg.headers?.code === 503)
    return {
      ok: false,
      error: new PublishError('503', 'no responders: no stream stores this subject'),
    };
  let body: PubAckBody;
  try {
    body = JSON.parse(decoder.decode(msg.data)) as PubAckBody;
  } catch {
    return { ok: false, error: new PublishError('INVALID_ACK', 'the PubAck is not JSON') };
  }
  if (body.error !== undefined)
    return {
      ok: false,
      error: new PublishError(
        String(body.error.code ?? 500),
        `JetStream refused the message: ${body.error.description ?? 'no description'} (${body.error.err_code ?? '?'})`,
      ),
    };
  if (typeof body.stream !== 'string' || body.stream === '')
    return { ok: false, error: new PublishError('INVALID_ACK', 'the PubAck names no stream') };
  return { ok: true, duplicate: body.duplicate === true };
}

/**
 * The reply subscription of one connection (`<inbox>.*`) and the messages waiting for their
 * PubAck, by token. nats.js renews the subscription after a reconnect; a PubAck lost with the
 * connection leaves its message to the batch's timeout, and the outbox publishes it again (the
 * stream drops the copy by its Nats-Msg-Id).
 */
export class PubAckInbox {
  private readonly prefix = createInbox();
  private readonly waiting = new Map<string, (msg: Msg) => void>();
  private next = 0;

  /** Lives as long as the connection: draining the connection at close ends it. */
  constructor(private readonly nc: NatsConnection) {
    nc.subscribe(`${this.prefix}.*`, {
      callback: (err, msg) => {
        if (err === null) this.arrived(msg);
      },
    });
  }

  /**
   * Publishes `messages` in order and resolves with each one's outcome, in the same order, once
   * every PubAck has come or `timeoutMs` have passed (the ones still waiting then time out).
   * Never rejects.
   */
  publishAll(messages: JetStreamMessage[], timeoutMs: number): Promise<PubAckOutcome[]> {
    if (messages.length === 0) return Promise.resolve([]);
    return new Promise((resolve) => {
      const outcomes = new Array<PubAckOutcome | undefined>(messages.length);
      const tokens: string[] = [];
      let left = messages.length;
      const finish = () => {
        clearTimeout(timer);
        for (const token of tokens) this.waiting.delete(token);
        resolve(outcomes as PubAckOutcome[]);
      };
      const settle = (i: number, outcome: PubAckOutcome) => {
        if (outcomes[i] !== undefined) return;
        outcomes[i] = outcome;
        if (--left === 0) finish();
      };
      const timer = setTimeout(() => {
        const late = new PublishError('TIMEOUT', `no PubAck within ${timeoutMs} ms`);
        for (let i = 0; i < outcomes.length; i++) outcomes[i] ??= { ok: false, error: late };
        finish();
      }, timeoutMs);
      messages.forEach((m, i) => {
        const token = (++this.next).toString(36);
        tokens.push(token);
        this.waiting.set(token, (msg) => settle(i, pubAckOutcome(msg)));
        try {
          this.nc.publish(m.subject, m.data, {
            reply: `${this.prefix}.${token}`,
            headers: m.headers,
          });
        } catch (err) {
          // The connection is closed or draining: nothing went out for this message.
          this.waiting.delete(token);
          settle(i, { ok: false, error: err instanceof Error ? err : new Error(String(err)) });
        }
      });
    });
  }

  private arrived(msg: Msg): void {
    const token = msg.subject.slice(this.prefix.length + 1);
    const settle = this.waiting.get(token);
    if (settle === undefined) return; // late: its batch timed out
    this.waiting.delete(token);
    settle(msg);
  }
}
