import type { Express } from 'express';
import { SCOPE_CATALOGUE, SCOPES } from '../../domain/scopes.js';
import { methodNotAllowed } from './errors.js';

/** OAuth 2.0 Protected Resource Metadata (RFC 9728) plus the scope catalogue. */
export function protectedResourceMetadata(publicBaseUrl: string): Record<string, unknown> {
  return {
    resource: `${publicBaseUrl}/api/v1/agent`,
    resource_name: 'Support Agent API',
    scopes_supported: [...SCOPES],
    bearer_methods_supported: ['header'],
    resource_documentation: `${publicBaseUrl}/api/v1/agent/openapi.json`,
    'x-api-scopes': SCOPE_CATALOGUE,
  };
}

export function mountProtectedResource(app: Express, publicBaseUrl: string): void {
  const body = protectedResourceMetadata(publicBaseUrl);
  app
    .route('/.well-known/oauth-protected-resource')
    .get((_req, res) => {
      res.set('Cache-Control', 'public, max-age=300');
      res.json(body);
    })
    .all(methodNotAllowed(['GET', 'HEAD']));
}
