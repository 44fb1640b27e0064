import { randomUUID } from 'node:crypto';
import { connect, type NatsConnection } from 'nats';
import { ensureTicketsStream, STREAM_NAME } from '@support-agent/events';

/** A ticket event as the tickets service publishes it (packages/events' envelope). */
export interface EventEnvelope<Type extends string = string> {
  id: string;
  type: Type;
  org_id: string;
  /** The ticket's key, unique across organizations (not what the API shows). */
  ticket_id: number;
  /** The ticket's number in its organization: the API's id. Absent in envelopes written before it existed. */
  ticket_number?: number;
  occurred_at: string;
  data: Record<string, unknown>;
}

/** Reads every message stored in a JetStream stream, in sequence order. */
export async function readStream(
  natsUrl: string,
  stream = STREAM_NAME,
): Promise<Array<{ subject: string; msgId: string | undefined; event: EventEnvelope }>> {
  const nc = await connect({ servers: natsUrl, timeout: 5_000 });
  try {
    const jsm = await nc.jetstreamManager();
    let info;
    try {
      info = await jsm.streams.info(stream);
    } catch {
      return [];
    }
    const out: Array<{ subject: string; msgId: string | undefined; event: EventEnvelope }> = [];
    for (
      let seq = info.state.first_seq;
      seq <= info.state.last_seq && info.state.messages > 0;
      seq++
    ) {
      try {
        const m = await jsm.streams.getMessage(stream, { seq });
        out.push({
          subject: m.subject,
          msgId: m.header?.get('Nats-Msg-Id') || undefined,
          event: m.json<EventEnvelope>(),
        });
      } catch {
        // deleted sequence
      }
    }
    return out;
  } finally {
    await nc.close();
  }
}

/** A `tickets.created` envelope as the tickets service writes it (before `version` existed). */
export function createdEnvelope(
  orgId: string,
  ticketId: number,
  content: string,
  createdAt: Date,
  id: string = randomUUID(),
): EventEnvelope & { type: 'tickets.created' } {
  return {
    id,
    type: 'tickets.created',
    org_id: orgId,
    ticket_id: ticketId,
    occurred_at: createdAt.toISOString(),
    data: {
      content,
      author_name: null,
      status: 'open',
      priority: 'medium',
      category: null,
      created_at: createdAt.toISOString(),
    },
  };
}

/**
 * Publishes envelopes as the tickets outbox relay does: subject = type, Nats-Msg-Id = the event
 * id unless `msgId` says otherwise (a copy past the duplicate window); creates the stream with
 * the contract's settings if it does not exist yet.
 */
type Envelope = { id: string; type: string };

export class StreamPublisher {
  private constructor(private readonly nc: NatsConnection) {}

  static async connect(url: string): Promise<StreamPublisher> {
    const nc = await connect({ servers: url, timeout: 5_000 });
    await ensureTicketsStream(await nc.jetstreamManager(), { replicas: 1, update: false });
    return new StreamPublisher(nc);
  }

  /** Publishes one event (`msgId` replaces its id as Nats-Msg-Id: a copy JetStream keeps). */
  async publish(event: Envelope, msgId?: string): Promise<void>;
  /** Publishes each event in order; returns how many JetStream dropped as duplicates. */
  async publish<E extends Envelope>(
    events: E[],
    msgId?: (e: E) => string,
  ): Promise<{ duplicates: number }>;
  async publish(
    events: Envelope | Envelope[],
    msgId?: string | ((e: Envelope) => string),
  ): Promise<{ duplicates: number } | void> {
    const js = this.nc.jetstream();
    let duplicates = 0;
    for (const e of Array.isArray(events) ? events : [events]) {
      const id = typeof msgId === 'string' ? msgId : (msgId?.(e) ?? e.id);
      const ack = await js.publish(e.type, JSON.stringify(e), { msgID: id, timeout: 5_000 });
      if (ack.duplicate) duplicates++;
    }
    return Array.isArray(events) ? { duplicates } : undefined;
  }

  /** Any body on any subject (what a foreign or broken producer could leave on the stream). */
  async publishRaw(subject: string, payload: string): Promise<void> {
    await this.nc.jetstream().publish(subject, payload, { msgID: randomUUID() });
  }

  async close(): Promise<void> {
    await this.nc.drain();
  }
}
