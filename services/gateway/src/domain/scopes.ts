/**
 * The five least-privilege scopes of an API key (DESIGN.md §3), in catalogue order. Their
 * descriptions and operations (`x-api-scopes`) live in the OpenAPI document (api-contract.ts).
 */
export const SCOPES = [
  'kb:read',
  'faq:read',
  'tickets:read',
  'tickets:write',
  'answers:write',
] as const;

export type Scope = (typeof SCOPES)[number];

export function isScope(value: unknown): value is Scope {
  return typeof value === 'string' && (SCOPES as readonly string[]).includes(value);
}

/** Deduplicated, in catalogue order, so stored and displayed scope lists are stable. */
export function normalizeScopes(scopes: Iterable<Scope>): Scope[] {
  const set = new Set(scopes);
  return SCOPES.filter((s) => set.has(s));
}
