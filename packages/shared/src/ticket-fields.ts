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

/**
 * An organization may name its own categories (its triage model then chooses among them): 1 to
 * 32 characters (the column width of tickets and digest), letters, digits, space, `_`, `-`,
 * `.`, `&`, `+` and `/`, starting and ending with a letter or digit. A ticket's category and the
 * list filter `category` take any such name; the built-in five are names of this form.
 */
export const CATEGORY_NAME_MAX = 32;
const CATEGORY_NAME = /^[A-Za-z0-9](?:[A-Za-z0-9 _.&+/-]{0,30}[A-Za-z0-9])?$/;

export function isCategoryName(value: unknown): value is string {
  return typeof value === 'string' && CATEGORY_NAME.test(value);
}

/** What isCategoryName accepts, in words (for error messages). */
export const CATEGORY_NAME_RULE =
  "1 to 32 characters: letters, digits, space, '_', '-', '.', '&', '+' or '/', starting and ending with a letter or digit";
