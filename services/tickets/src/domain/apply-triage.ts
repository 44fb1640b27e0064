import { ticketStatusChanged, ticketTriaged, type TicketEvent } from './events.js';
import type { TicketsDeps } from './ports.js';
import { TICKET_PRIORITIES, type Ticket } from './ticket.js';
import {
  optionalText,
  requireCategory,
  requireOneOf,
  requireText,
  requireTicketRef,
  ticketNotFound,
} from './validation.js';

export const AI_SUMMARY_MAX = 4000;
export const AI_ANSWER_MAX = 20_000;
const EVENT_ID_MAX = 64;

export interface ApplyTriageInput {
  orgId: string;
  ticketId: number;
  /** Id of the tickets.created event that was triaged: the idempotency key of this call. */
  eventId: string;
  category: string;
  priority: string;
  aiSummary: string;
  aiAnswer?: string | undefined;
  /** The automatic answer was high-confidence: an open ticket becomes resolved. */
  resolve: boolean;
}

export interface ApplyTriageResult {
  ticket: Ticket;
  /** False when this event id had been applied before (nothing changed). */
  applied: boolean;
}

/** Records the triage pipeline's labels and answer on a ticket, once per triage event. */
export async function applyTriage(
  deps: TicketsDeps,
  input: ApplyTriageInput,
): Promise<ApplyTriageResult> {
  const { orgId, ticketId } = requireTicketRef(input);
  const eventId = requireText(input.eventId, 'event_id', EVENT_ID_MAX);
  const category = requireCategory(input.category);
  const priority = requireOneOf(input.priority, TICKET_PRIORITIES, 'priority');
  const aiSummary = optionalText(input.aiSummary, 'ai_summary', AI_SUMMARY_MAX);
  const aiAnswer = optionalText(input.aiAnswer, 'ai_answer', AI_ANSWER_MAX);
  const answered = input.resolve && aiAnswer !== null;

  const outcome = await deps.repo.update(
    orgId,
    ticketId,
    (current) => {
      const resolves = input.resolve && current.status === 'open';
      const next: Ticket = {
        ...current,
        category,
        priority,
        aiSummary,
        aiAnswer,
        status: resolves ? 'resolved' : current.status,
        updatedAt: deps.now(),
      };
      const events: TicketEvent[] = [ticketTriaged(next, answered)];
      if (resolves) events.push(ticketStatusChanged(next, current.status, next.status));
      return { next, events };
    },
    { onceKey: eventId },
  );
  switch (outcome.kind) {
    case 'not_found':
      throw ticketNotFound(ticketId);
    case 'already_applied':
      return { ticket: outcome.ticket, applied: false };
    default:
      deps.eventsWritten();
      return { ticket: outcome.ticket, applied: true };
  }
}
