import type { TicketsDeps } from './ports.js';
import type { Ticket } from './ticket.js';
import { requireTicketRef, ticketNotFound } from './validation.js';

/** A ticket of the organization; not_found for unknown ids and for other organizations' tickets alike. */
export async function getTicket(
  deps: TicketsDeps,
  input: { orgId: string; ticketId: number },
): Promise<Ticket> {
  const { orgId, ticketId } = requireTicketRef(input);
  const ticket = await deps.repo.get(orgId, ticketId);
  if (!ticket) throw ticketNotFound(ticketId);
  return ticket;
}
