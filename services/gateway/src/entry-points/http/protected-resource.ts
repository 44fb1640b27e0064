import type { Express } from 'express';
import type { ScopeInfo } from '../../domain/api-contract.js';
import { SCOPES, type Scope } from '../../domain/scopes.js';
import { WELL_KNOWN } from './auth.js';
import type { BaseUrlOf } from './base-url.js';
import { methodNotAllowed } from './errors.js';

/** Resources with their own metadata: the path of the resource identifier below the base URL. */
export const PROTECTED_RESOURCES = [
  { path: '', name: 'Support Agent API' },
  { path: '/api/v1/agent', name: 'Support Agent API' },
  { path: '/api/agent', name: 'Support Agent API' },
  { path: '/api/mcp', name: 'Support Agent API (MCP server)' },
] as const;

/** `x-authentication.description`: what a client should do, with and without a login. */
const API_KEY_NOTE =
  'Send an API key of this deployment as `Authorization: Bearer <API key>` (keys are issued by ' +
  'its operators through the admin API). This resource offers no OAuth login: without ' +
  '`authorization_servers` there is no authorization server to discover or register with, so ' +
  'configure MCP clients with the header instead of an OAuth sign-in.';
const API_KEY_NOTE_WITH_SERVERS =
  'Send an API key of this deployment as `Authorization: Bearer <API key>`: issued by its ' +
  'operators, or as the access token of an OAuth login at one of `authorization_servers`.';

export interface ProtectedResourceOptions {
  scopeCatalogue: Readonly<Record<Scope, ScopeInfo>>;
  /**
   * OAuth authorization servers (issuer URLs) whose access tokens are API keys of this
   * deployment (AUTHORIZATION_SERVERS); empty when keys are only issued by operators.
   */
  authorizationServers: readonly string[];
}

/**
 * OAuth 2.0 Protected Resource Metadata (RFC 9728) plus the scope catalogue. `resource` is the
 * identifier the metadata URL was derived from (§3.3: the well-known suffix inserted between
 * host and path), so a client can check it: `<base>` at `/.well-known/oauth-protected-resource`,
 * `<base>/api/mcp` at `/.well-known/oauth-protected-resource/api/mcp`, and so on.
 * `authorization_servers` appears only when one is configured; `x-authentication` says how to
 * authenticate, so that without a server neither a person nor an agent looks for an OAuth login.
 */
export function protectedResourceMetadata(
  baseUrl: string,
  resourcePath: string,
  resourceName: string,
  options: ProtectedResourceOptions,
): Record<string, unknown> {
  const servers = options.authorizationServers;
  return {
    resource: `${baseUrl}${resourcePath}`,
    resource_name: resourceName,
    ...(servers.length > 0 ? { authorization_servers: [...servers] } : {}),
    scopes_supported: [...SCOPES],
    bearer_methods_supported: ['header'],
    resource_documentation: `${baseUrl}/docs`,
    'x-authentication': {
      type: 'api_key',
      header: 'Authorization',
      scheme: 'Bearer',
      oauth_login: servers.length > 0,
      description: servers.length > 0 ? API_KEY_NOTE_WITH_SERVERS : API_KEY_NOTE,
    },
    'x-api-scopes': options.scopeCatalogue,
  };
}

export function mountProtectedResource(
  app: Express,
  baseUrlOf: BaseUrlOf,
  options: ProtectedResourceOptions,
): void {
  for (const resource of PROTECTED_RESOURCES) {
    app
      .route(`${WELL_KNOWN}${resource.path}`)
      .get((req, res) => {
        res.set('Cache-Control', 'public, max-age=300');
        res.json(protectedResourceMetadata(baseUrlOf(req), resource.path, resource.name, options));
      })
      .all(methodNotAllowed(['GET', 'HEAD']));
  }
}
