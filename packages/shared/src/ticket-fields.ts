// The values a ticket's fields may take (DESIGN.md §3): the tickets service stores and checks
// them, the answers service's triage chooses the category and priority among them.

export const TICKET_STATUSES = ['open', 'in_progress', 'resolved', 'closed', 'duplicate'] as const;
export const TICKET_PRIORITIES = ['critical', 'high', 'medium', 'low'] as const;
export const TICKET_CATEGORIES = [
  'bug',
  'feature_request',
  'documentation',
  'how_to',
  'general_question',
] as const;

export type TicketStatus = (typeof TICKET_STATUSES)[number];
export type TicketPriority = (typeof TICKET_PRIORITIES)[number];
export type TicketCategory = (typeof TICKET_CATEGORIES)[number];
