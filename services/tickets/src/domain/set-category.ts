import { ticketCategoryChanged } from './events.js';
import type { TicketsDeps } from './ports.js';
import type { Ticket } from './ticket.js';
import { requireCategory, requireTicketRef, ticketNotFound } from './validation.js';

export interface SetCategoryInput {
  orgId: string;
  ticketId: number;
  category: string;
}

/**
 * A person sets a ticket's category (staff side): recorded with a tickets.category_changed
 * event, from which the organization's triage learns. The same category again is a no-op that
 * returns the ticket (no event: nothing new was learned).
 */
export async function setTicketCategory(
  deps: TicketsDeps,
  input: SetCategoryInput,
): Promise<Ticket> {
  const { orgId, ticketId } = requireTicketRef(input);
  const to = requireCategory(input.category);
  const outcome = await deps.repo.update(orgId, ticketId, (current) => {
    if (current.category === to) return null;
    const next: Ticket = { ...current, category: to, updatedAt: deps.now() };
    return { next, events: [ticketCategoryChanged(next, current.category, to)] };
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
