import { randomUUID } from 'node:crypto';
import { currentTraceparent, toRfc3339 } from '@support-agent/shared';
import type { Ticket, TicketStatus } from './ticket.js';

export type TicketEventType = 'tickets.created' | 'tickets.triaged' | 'tickets.status_changed';

/** The envelope of every ticket event (DESIGN.md §4); the NATS subject is `type`. */
export interface TicketEvent<D = Record<string, unknown>> {
  id: string;
  type: TicketEventType;
  org_id: string;
  ticket_id: number;
  occurred_at: string;
  data: D;
}

/** An event as it travels from the outbox to the broker: the serialized envelope, never re-encoded. */
export interface OutboxMessage {
  eventId: string;
  subject: string;
  payload: string;
  /** W3C traceparent of the request that recorded the event (tracing on), sent as a header. */
  traceparent?: string | null;
}

export function toOutboxMessage(event: TicketEvent): OutboxMessage {
  return {
    eventId: event.id,
    subject: event.type,
    payload: JSON.stringify(event),
    traceparent: currentTraceparent(),
  };
}

function envelope<D>(type: TicketEventType, ticket: Ticket, at: Date, data: D): TicketEvent<D> {
  return {
    id: randomUUID(),
    type,
    org_id: ticket.orgId,
    ticket_id: ticket.id,
    occurred_at: toRfc3339(at),
    data,
  };
}

export function ticketCreated(ticket: Ticket): TicketEvent {
  return envelope('tickets.created', ticket, ticket.createdAt, {
    content: ticket.content,
    author_name: ticket.authorName,
    status: ticket.status,
    priority: ticket.priority,
    category: ticket.category,
    created_at: toRfc3339(ticket.createdAt),
  });
}

export function ticketStatusChanged(
  ticket: Ticket,
  from: TicketStatus,
  to: TicketStatus,
): TicketEvent {
  return envelope('tickets.status_changed', ticket, ticket.updatedAt, { from, to });
}

export function ticketTriaged(ticket: Ticket, answered: boolean): TicketEvent {
  return envelope('tickets.triaged', ticket, ticket.updatedAt, {
    category: ticket.category,
    priority: ticket.priority,
    ai_summary: ticket.aiSummary,
    answered,
    // The automatic answer, so the FAQ digest can quote it without a lookup.
    ai_answer: answered ? ticket.aiAnswer : null,
    status: ticket.status,
  });
}
