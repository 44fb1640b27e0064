import type { Express } from 'express';
import type { ScopeInfo } from '../../domain/api-contract.js';
import { SCOPES, type Scope } from '../../domain/scopes.js';
import { WELL_KNOWN } from './auth.js';
import { methodNotAllowed } from './errors.js';

/** Resources with their own metadata: the path of the resource identifier below the base URL. */
export const PROTECTED_RESOURCES = [
  { path: '', name: 'Support Agent API' },
  { path: '/api/v1/agent', name: 'Support Agent API' },
  { path: '/api/agent', name: 'Support Agent API' },
  { path: '/api/mcp', name: 'Support Agent API (MCP server)' },
] as const;

/**
 * OAuth 2.0 Protected Resource Metadata (RFC 9728) plus the scope catalogue. `resource` is the
 * identifier the metadata URL was derived from (§3.3: the well-known suffix inserted between
 * host and path), so a client can check it: `<base>` at `/.well-known/oauth-protected-resource`,
 * `<base>/api/mcp` at `/.well-known/oauth-protected-resource/api/mcp`, and so on.
 */
export function protectedResourceMetadata(
  publicBaseUrl: string,
  resourcePath: string,
  resourceName: string,
  scopeCatalogue: Readonly<Record<Scope, ScopeInfo>>,
): Record<string, unknown> {
  return {
    resource: `${publicBaseUrl}${resourcePath}`,
    resource_name: resourceName,
    scopes_supported: [...SCOPES],
    bearer_methods_supported: ['header'],
    resource_documentation: `${publicBaseUrl}/docs`,
    'x-api-scopes': scopeCatalogue,
  };
}

export function mountProtectedResource(
  app: Express,
  publicBaseUrl: string,
  scopeCatalogue: Readonly<Record<Scope, ScopeInfo>>,
): void {
  for (const resource of PROTECTED_RESOURCES) {
    const body = protectedResourceMetadata(
      publicBaseUrl,
      resource.path,
      resource.name,
      scopeCatalogue,
    );
    app
      .route(`${WELL_KNOWN}${resource.path}`)
      .get((_req, res) => {
        res.set('Cache-Control', 'public, max-age=300');
        res.json(body);
      })
      .all(methodNotAllowed(['GET', 'HEAD']));
  }
}
