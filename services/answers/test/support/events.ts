import { appendFileSync, mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import { createdEnvelope } from '../../../../test/support/events.js';

/** Publishes to JetStream like the tickets outbox relay (stream created first if missing). */
export { StreamPublisher as EventPublisher } from '../../../../test/support/events.js';

/** A tickets.created envelope as the tickets service publishes it (DESIGN.md §4). */
export function ticketCreated(orgId: string, ticketId: number, content: string, id?: string) {
  return createdEnvelope(orgId, ticketId, content, new Date(), id);
}

/** Appends an event line to the embedded event file, as the tickets service's embedded publisher does. */
export function appendEvent(file: string, event: unknown): void {
  mkdirSync(dirname(file), { recursive: true });
  appendFileSync(file, `${JSON.stringify(event)}\n`);
}
