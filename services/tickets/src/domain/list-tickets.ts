import { invalidRequest } from '@support-agent/shared';
import type { TicketsDeps } from './ports.js';
import {
  TICKET_PRIORITIES,
  TICKET_STATUSES,
  positionOf,
  type Ticket,
  type TicketFilters,
} from './ticket.js';
import { isBlank, optionalCategory, optionalOneOf, requireOrgId } from './validation.js';

export interface ListTicketsInput {
  orgId: string;
  status?: string | undefined;
  priority?: string | undefined;
  category?: string | undefined;
  /** 0 or absent means the default. */
  limit?: number | undefined;
  cursor?: string | undefined;
}

export interface ListTicketsResult {
  tickets: Ticket[];
  /** Set only when more tickets follow. */
  nextCursor?: string;
}

/** One page of an organization's tickets, newest first, with a signed keyset cursor. */
export async function listTickets(
  deps: TicketsDeps,
  input: ListTicketsInput,
): Promise<ListTicketsResult> {
  const orgId = requireOrgId(input.orgId);
  const filters: TicketFilters = {
    status: optionalOneOf(input.status, TICKET_STATUSES, 'status'),
    priority: optionalOneOf(input.priority, TICKET_PRIORITIES, 'priority'),
    category: optionalCategory(input.category),
  };
  const limit = parseLimit(input.limit);
  const after = isBlank(input.cursor)
    ? undefined
    : deps.cursors.decode(input.cursor, orgId, filters);

  // One extra row tells whether another page exists without a COUNT.
  const rows = await deps.repo.list({ orgId, filters, after, limit: limit + 1 });
  const tickets = rows.slice(0, limit);
  const last = tickets[tickets.length - 1];
  if (rows.length > limit && last) {
    return { tickets, nextCursor: deps.cursors.encode(positionOf(last), orgId, filters) };
  }
  return { tickets };
}

/** A page holds LIST_LIMIT_DEFAULT tickets unless the caller asks for up to LIST_LIMIT_MAX. */
const LIST_LIMIT_DEFAULT = 10;
const LIST_LIMIT_MAX = 20;

function parseLimit(limit: number | undefined): number {
  if (limit === undefined || limit === 0) return LIST_LIMIT_DEFAULT;
  if (!Number.isInteger(limit) || limit < 1 || limit > LIST_LIMIT_MAX) {
    throw invalidRequest(`limit must be an integer from 1 to ${LIST_LIMIT_MAX}`, 'limit');
  }
  return limit;
}
