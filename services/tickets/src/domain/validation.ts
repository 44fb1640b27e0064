import {
  AppError,
  CATEGORY_NAME_RULE,
  codePointLength,
  invalidRequest,
  isBlank,
  isCategoryName,
} from '@support-agent/shared';

export { codePointLength, isBlank };

/** A required text field, returned verbatim. */
export function requireText(value: string | undefined, param: string, max: number): string {
  if (isBlank(value)) throw invalidRequest(`${param} is required`, param);
  if (codePointLength(value) > max)
    throw invalidRequest(`${param} must be at most ${max} characters`, param);
  return value;
}

/** An optional text field: blank means absent (null); otherwise returned verbatim. */
export function optionalText(
  value: string | null | undefined,
  param: string,
  max: number,
): string | null {
  if (isBlank(value)) return null;
  if (codePointLength(value) > max)
    throw invalidRequest(`${param} must be at most ${max} characters`, param);
  return value;
}

/** A required value from a closed list. */
export function requireOneOf<T extends string>(
  value: string | undefined,
  allowed: readonly T[],
  param: string,
): T {
  if (isBlank(value)) throw invalidRequest(`${param} is required`, param);
  return oneOf(value, allowed, param);
}

/** An optional filter value from a closed list; blank means "no filter". */
export function optionalOneOf<T extends string>(
  value: string | undefined,
  allowed: readonly T[],
  param: string,
): T | undefined {
  return isBlank(value) ? undefined : oneOf(value, allowed, param);
}

function oneOf<T extends string>(value: string, allowed: readonly T[], param: string): T {
  if (!(allowed as readonly string[]).includes(value)) {
    throw invalidRequest(`${param} must be one of: ${allowed.join(', ')}`, param);
  }
  return value as T;
}

export const ORG_ID_MAX = 64;

export function requireOrgId(value: string | undefined): string {
  if (isBlank(value) || value.length > ORG_ID_MAX || /\s/.test(value)) {
    throw invalidRequest('org_id is required (at most 64 characters, no white space)', 'org_id');
  }
  return value;
}

export function requireTicketId(value: number | undefined): number {
  if (value === undefined || !Number.isSafeInteger(value) || value <= 0) {
    throw invalidRequest('ticket_id must be a positive integer', 'ticket_id');
  }
  return value;
}

/** The ticket a request names: its organization and its id, both checked. */
export function requireTicketRef(input: { orgId: string; ticketId: number }) {
  return { orgId: requireOrgId(input.orgId), ticketId: requireTicketId(input.ticketId) };
}

export function ticketNotFound(ticketId: number): AppError {
  return new AppError('not_found', `ticket ${ticketId} not found`);
}

/**
 * A category: any name of the shared form (packages/shared ticket-fields), since organizations
 * name their own; which names an organization uses is the gateway's and answers' to check.
 */
export function requireCategory(value: string | undefined, param = 'category'): string {
  if (isBlank(value)) throw invalidRequest(`${param} is required`, param);
  return categoryName(value, param);
}

/** An optional category filter; blank means "no filter". */
export function optionalCategory(
  value: string | undefined,
  param = 'category',
): string | undefined {
  return isBlank(value) ? undefined : categoryName(value, param);
}

function categoryName(value: string, param: string): string {
  if (!isCategoryName(value))
    throw invalidRequest(`${param} is not a category name: ${CATEGORY_NAME_RULE}`, param);
  return value;
}
