import { toRfc3339 } from '@support-agent/shared';
import {
  newTicketEvent,
  type TicketEnvelope,
  type TicketEventData,
  type TicketEventType,
} from '@support-agent/events';
import type { Ticket, TicketStatus } from './ticket.js';

// The envelope and payload schemas are the events contract's (packages/events); this module
// only says what each ticket change records.
export { toOutboxMessage, type OutboxMessage } from '@support-agent/events';
export type TicketEvent = TicketEnvelope;

function envelope<T extends TicketEventType>(
  type: T,
  ticket: Ticket,
  at: Date,
  data: TicketEventData<T>,
): TicketEnvelope<T> {
  return newTicketEvent(
    type,
    {
      org_id: ticket.orgId,
      ticket_id: ticket.globalId,
      ticket_number: ticket.id,
      occurred_at: toRfc3339(at),
    },
    data,
  );
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

export function ticketCategoryChanged(
  ticket: Ticket,
  from: string | null,
  to: string,
): TicketEvent {
  return envelope('tickets.category_changed', ticket, ticket.updatedAt, {
    from,
    to,
    content: ticket.content,
  });
}
