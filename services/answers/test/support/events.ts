import { randomUUID } from 'node:crypto';
import { appendFileSync, mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import { connect, type NatsConnection } from 'nats';
import { ensureTicketsStream } from '@support-agent/events';

/** A tickets.created envelope as the tickets service publishes it (DESIGN.md §4). */
export function ticketCreated(
  orgId: string,
  ticketId: number,
  content: string,
  id: string = randomUUID(),
) {
  const at = new Date().toISOString();
  return {
    id,
    type: 'tickets.created',
    org_id: orgId,
    ticket_id: ticketId,
    occurred_at: at,
    data: {
      content,
      author_name: null,
      status: 'open',
      priority: 'medium',
      category: null,
      created_at: at,
    },
  };
}

/** Publishes to JetStream like the tickets outbox relay (stream created first if missing). */
export class EventPublisher {
  private constructor(private readonly nc: NatsConnection) {}

  static async connect(url: string): Promise<EventPublisher> {
    const nc = await connect({ servers: url, timeout: 5_000 });
    await ensureTicketsStream(await nc.jetstreamManager(), { replicas: 1, update: false });
    return new EventPublisher(nc);
  }

  /** `msgId` defaults to the event id (as the relay does); pass another to force a redelivery-like duplicate. */
  async publish(event: { id: string; type: string }, msgId: string = event.id): Promise<void> {
    await this.nc.jetstream().publish(event.type, JSON.stringify(event), { msgID: msgId });
  }

  async publishRaw(subject: string, payload: string): Promise<void> {
    await this.nc.jetstream().publish(subject, payload, { msgID: randomUUID() });
  }

  async close(): Promise<void> {
    await this.nc.drain();
  }
}

/** Appends an event line to the embedded event file, as the tickets service's embedded publisher does. */
export function appendEvent(file: string, event: unknown): void {
  mkdirSync(dirname(file), { recursive: true });
  appendFileSync(file, `${JSON.stringify(event)}\n`);
}
