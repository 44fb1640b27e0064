/** The five least-privilege scopes of an API key (DESIGN.md §3), in catalogue order. */
export const SCOPES = [
  'kb:read',
  'faq:read',
  'tickets:read',
  'tickets:write',
  'answers:write',
] as const;

export type Scope = (typeof SCOPES)[number];

export interface ScopeInfo {
  description: string;
  /** operationIds of the OpenAPI document that require the scope. */
  operations: string[];
}

/** Scope → description → operations; published as `x-api-scopes`. */
export const SCOPE_CATALOGUE: Record<Scope, ScopeInfo> = {
  'kb:read': {
    description: "Search the organization's knowledge base.",
    operations: ['searchKnowledgeBase'],
  },
  'faq:read': {
    description: 'Read the latest weekly FAQ digest.',
    operations: ['getFaqDigest'],
  },
  'tickets:read': {
    description: "List the organization's support tickets.",
    operations: ['listTickets'],
  },
  'tickets:write': {
    description: 'Create support tickets.',
    operations: ['createTicket'],
  },
  'answers:write': {
    description: 'Generate grounded answers (counts toward the monthly deflection limit).',
    operations: ['generateAnswer'],
  },
};

export function isScope(value: unknown): value is Scope {
  return typeof value === 'string' && (SCOPES as readonly string[]).includes(value);
}

/** Deduplicated, in catalogue order, so stored and displayed scope lists are stable. */
export function normalizeScopes(scopes: Iterable<Scope>): Scope[] {
  const set = new Set(scopes);
  return SCOPES.filter((s) => set.has(s));
}
