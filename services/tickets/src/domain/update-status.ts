import { AppError } from '@support-agent/shared';
import { ticketStatusChanged } from './events.js';
import type { TicketsDeps } from './ports.js';
import { TICKET_STATUSES, type Ticket, type TicketStatus } from './ticket.js';
import { requireOneOf, requireTicketRef, ticketNotFound } from './validation.js';

/**
 * Staff-side transitions (DESIGN.md §3): open → in_progress → resolved → closed,
 * resolved → open (reopen), and any status but closed → duplicate.
 */
const STAFF_TRANSITIONS: Record<TicketStatus, readonly TicketStatus[]> = {
  open: ['in_progress', 'duplicate'],
  in_progress: ['resolved', 'duplicate'],
  resolved: ['closed', 'open', 'duplicate'],
  closed: [],
  duplicate: [],
};

export function canMove(from: TicketStatus, to: TicketStatus): boolean {
  return STAFF_TRANSITIONS[from].includes(to);
}

export interface UpdateStatusInput {
  orgId: string;
  ticketId: number;
  status: string;
}

/** Moves a ticket to a new status; the same status is a no-op that returns the ticket. */
export async function updateTicketStatus(
  deps: TicketsDeps,
  input: UpdateStatusInput,
): Promise<Ticket> {
  const { orgId, ticketId } = requireTicketRef(input);
  const to = requireOneOf(input.status, TICKET_STATUSES, 'status');

  const outcome = await deps.repo.update(orgId, ticketId, (current) => {
    const from = current.status;
    if (from === to) return null;
    if (!canMove(from, to)) {
      throw new AppError('conflict', `cannot move a ticket from ${from} to ${to}`, {
        param: 'status',
      });
    }
    const next: Ticket = { ...current, status: to, updatedAt: deps.now() };
    return { next, events: [ticketStatusChanged(next, from, to)] };
  });
  switch (outcome.kind) {
    case 'not_found':
      throw ticketNotFound(ticketId);
    case 'updated':
      deps.eventsWritten();
      return outcome.ticket;
    default:
      return outcome.ticket;
  }
}
