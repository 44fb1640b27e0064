import type { digest as digestPb } from '@support-agent/proto';

/**
 * A digest as the admin API returns it (DESIGN.md §5): the public fields, plus
 * `summary` — the same digest as data (topics with stable ids, this and last week's
 * counts, trend, automatic answers, KB answer, ticket ids) — when the digest has one.
 */
export function digestToJson(d: digestPb.Digest): Record<string, unknown> {
  return {
    org_id: d.orgId,
    week_start: d.weekStart,
    week_end: d.weekEnd,
    ticket_count: d.ticketCount,
    content: d.content,
    generated_at: d.generatedAt,
    ...(d.summary ? { summary: summaryToJson(d.summary) } : {}),
  };
}

function summaryToJson(s: digestPb.DigestSummary): Record<string, unknown> {
  return {
    iso_week: s.isoWeek,
    partial: s.partial,
    grouped_tickets: s.groupedTickets,
    answered_automatically: s.answeredAutomatically,
    last_week_ticket_count: s.lastWeekTicketCount ?? null,
    kb_checked: s.kbChecked,
    topics: s.topics.map((t) => ({
      id: t.id,
      title: t.title,
      answered: t.answered,
      tickets: t.tickets,
      last_week_tickets: t.lastWeekTickets,
      trend: t.trend ?? null,
      answered_automatically: t.answeredAutomatically,
      examples: t.examples,
      answer: t.answer
        ? {
            kind: t.answer.kind,
            text: t.answer.text,
            kb_entry_id: t.answer.kbEntryId ?? null,
            kb_question: t.answer.kbQuestion ?? null,
            summarized: t.answer.summarized,
          }
        : null,
      ticket_ids: t.ticketIds,
    })),
  };
}
