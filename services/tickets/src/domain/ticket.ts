import type { TicketPriority, TicketStatus } from '@support-agent/shared';

/** The values a ticket field may take (DESIGN.md §3), shared with the answers service's triage. */
export {
  TICKET_PRIORITIES,
  TICKET_STATUSES,
  type TicketPriority,
  type TicketStatus,
} from '@support-agent/shared';

export interface Ticket {
  /**
   * The ticket's number in its organization (1, 2, 3… in order of creation): the id the API and
   * every RPC use, `ticket_number` in events. Numbers never reveal other organizations' volume.
   */
  id: number;
  /**
   * The store's key, unique across organizations: events' `ticket_id`. Never returned by the
   * API (one counter for every tenant would show each of them the platform's volume).
   */
  globalId: number;
  orgId: string;
  content: string;
  authorName: string | null;
  idempotencyKey: string | null;
  status: TicketStatus;
  priority: TicketPriority;
  /** A built-in category or one of the organization's own (any name of the shared form). */
  category: string | null;
  aiSummary: string | null;
  aiAnswer: string | null;
  /** Millisecond precision, UTC. */
  createdAt: Date;
  updatedAt: Date;
}

/** A ticket before the store has given it its number and key. */
export type TicketDraft = Omit<Ticket, 'id' | 'globalId'>;

/** A ticket as it is opened: open, medium priority, no labels or answer until triage. */
export function openedTicket(
  fields: Pick<TicketDraft, 'orgId' | 'content' | 'authorName' | 'idempotencyKey'>,
  now: Date,
): TicketDraft {
  return {
    ...fields,
    status: 'open',
    priority: 'medium',
    category: null,
    aiSummary: null,
    aiAnswer: null,
    createdAt: now,
    updatedAt: now,
  };
}

/** Filters of ListTickets; each one set narrows the result (AND). */
export interface TicketFilters {
  status?: TicketStatus | undefined;
  priority?: TicketPriority | undefined;
  category?: string | undefined;
}

/** A keyset position in an organization's (created_at desc, id desc) order; id = the number. */
export interface ListPosition {
  createdAtMs: number;
  id: number;
}

export function positionOf(ticket: Ticket): ListPosition {
  return { createdAtMs: ticket.createdAt.getTime(), id: ticket.id };
}
