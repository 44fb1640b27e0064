import { weekStartOf } from './iso-week.js';
import type { TicketEvent } from './events.js';

/**
 * What the digest knows about one ticket, folded from its events. A row can
 * exist before its `tickets.created` event (a redelivered triage overtook it);
 * it counts towards a week only once the created event has been applied.
 */
export interface TicketAggregate {
  orgId: string;
  /**
   * The ticket's number in its organization: the id the API shows, events' `ticket_number`
   * (`digest_tickets.ticket_id`). Tickets created before numbers were per organization kept
   * their id as their number, so rows aggregated back then are keyed the same way.
   */
  ticketId: number;
  /** Monday of the ISO week of created_at; null until the created event arrives. */
  weekStart: string | null;
  createdAt: Date | null;
  content: string | null;
  category: string | null;
  status: string | null;
  /** occurred_at of the event that set `status` (later events win). */
  statusAt: Date | null;
  /** occurred_at of the triage applied last. */
  triagedAt: Date | null;
  /** The triage sent an automatic, high-confidence answer. */
  answered: boolean;
  aiSummary: string | null;
  aiAnswer: string | null;
}

export interface AppliedEvent {
  next: TicketAggregate;
  /** The week whose ticket count goes up by one, when this event is the ticket's first created event. */
  countedWeek: string | null;
}

export function emptyAggregate(orgId: string, ticketId: number): TicketAggregate {
  return {
    orgId,
    ticketId,
    weekStart: null,
    createdAt: null,
    content: null,
    category: null,
    status: null,
    statusAt: null,
    triagedAt: null,
    answered: false,
    aiSummary: null,
    aiAnswer: null,
  };
}

/** True when an event at `at` may overwrite a field last set at `setAt` (ties: the later-applied wins). */
function isNewer(at: Date, setAt: Date | null): boolean {
  return setAt === null || at.getTime() >= setAt.getTime();
}

/**
 * Folds one event into a ticket's aggregate. Pure and order-tolerant: fields
 * carry the time they were set, so a late or redelivered event never undoes a
 * newer one, and a ticket is counted once, by its created event.
 * Idempotency by event id is the store's job (same transaction).
 */
export function applyTicketEvent(
  current: TicketAggregate | undefined,
  event: TicketEvent,
): AppliedEvent {
  const base = current ?? emptyAggregate(event.org_id, event.ticket_number);
  const next: TicketAggregate = { ...base };
  const at = new Date(event.occurred_at);
  let countedWeek: string | null = null;

  switch (event.type) {
    case 'tickets.created': {
      if (base.createdAt === null) {
        const createdAt = new Date(event.data.created_at ?? event.occurred_at);
        next.createdAt = createdAt;
        next.weekStart = weekStartOf(createdAt);
        countedWeek = next.weekStart;
      }
      next.content = event.data.content;
      if (next.category === null) next.category = event.data.category;
      // Any later status change or triage already set a newer status.
      if (event.data.status && base.statusAt === null) {
        next.status = event.data.status;
        next.statusAt = at;
      }
      break;
    }
    case 'tickets.triaged': {
      if (isNewer(at, base.triagedAt)) {
        next.triagedAt = at;
        next.category = event.data.category;
        next.aiSummary = event.data.ai_summary;
        next.answered = base.answered || event.data.answered;
        if (event.data.ai_answer !== null) next.aiAnswer = event.data.ai_answer;
      } else {
        next.answered = base.answered || event.data.answered;
      }
      if (event.data.status && isNewer(at, base.statusAt)) {
        next.status = event.data.status;
        next.statusAt = at;
      }
      break;
    }
    case 'tickets.status_changed': {
      if (isNewer(at, base.statusAt)) {
        next.status = event.data.to;
        next.statusAt = at;
      }
      break;
    }
    case 'tickets.category_changed': {
      // A person's label: it wins over triage's, even over a triage event delivered late.
      if (isNewer(at, base.triagedAt)) {
        next.category = event.data.to;
        next.triagedAt = at;
      }
      break;
    }
  }
  return { next, countedWeek };
}
