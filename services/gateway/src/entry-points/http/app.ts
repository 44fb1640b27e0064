import type { Logger } from '@support-agent/shared';
import express, { type Express } from 'express';
import type { ApiContract } from '../../domain/api-contract.js';
import type { AgentOperations } from '../../domain/agent-operations.js';
import type { KeyResolver } from '../../domain/key-resolver.js';
import type { AuthFailureThrottle, RequestRateLimiter } from '../../domain/ports.js';
import { MCP_PATH, mountMcp } from '../mcp/mcp-routes.js';
import { McpToolset } from '../mcp/mcp-tools.js';
import { mountAgentRoutes } from './agent-routes.js';
import {
  authenticate,
  keyAuthenticator,
  protectedResourceMetadataUrl,
  type Challenges,
} from './auth.js';
import { basePath, baseUrlResolver } from './base-url.js';
import { mountDocs } from './docs.js';
import { errorHandler, notFound } from './errors.js';
import type { LogRedactor } from './log-redaction.js';
import { mountHealth, type Readiness } from './health.js';
import { mountProtectedResource } from './protected-resource.js';
import { requestLifecycle } from './request-context.js';

export interface PublicAppDeps {
  logger: Logger;
  /** Cuts credentials out of logged URLs (the admin token among them). */
  redactor: LogRedactor;
  /** PUBLIC_BASE_URL; unset = the address each request was sent to (see baseUrlResolver). */
  publicBaseUrl: string | undefined;
  /** Used when the request's Host header cannot be used (unset publicBaseUrl only). */
  fallbackBaseUrl: string;
  /** RFC 9728 `authorization_servers` (AUTHORIZATION_SERVERS); usually none. */
  authorizationServers: readonly string[];
  trustProxy: boolean | number | string;
  resolver: KeyResolver;
  authThrottle: AuthFailureThrottle;
  rateLimiter: RequestRateLimiter;
  /** The OpenAPI document (routes, scopes, limits, MCP tools). */
  contract: ApiContract;
  operations: AgentOperations;
  /** Browser origins allowed to call /api/mcp. */
  mcpAllowedOrigins: readonly string[];
  readiness: Readiness;
  shuttingDown: () => boolean;
}

/**
 * The public HTTP API: both prefixes, the OpenAPI document and its reference page, probes,
 * protected-resource metadata, the MCP endpoint; JSON errors only.
 */
export function createPublicApp(deps: PublicAppDeps): Express {
  const app = express();
  app.disable('x-powered-by');
  app.set('etag', false);
  app.set('trust proxy', deps.trustProxy);
  app.set('query parser', 'simple');

  app.use(
    requestLifecycle({
      draining: deps.shuttingDown,
      logger: deps.logger,
      // Every route is on the app itself: route patterns are whole paths.
      mounts: [],
      redactor: deps.redactor,
    }),
  );

  const baseUrlOf = baseUrlResolver(deps.publicBaseUrl, deps.fallbackBaseUrl);
  const authFor = (challenges: Challenges) =>
    keyAuthenticator({ resolver: deps.resolver, throttle: deps.authThrottle, challenges });
  // REST challenges name the API's metadata, MCP challenges the MCP endpoint's (RFC 9728 §5.1).
  const restChallenges: Challenges = {
    resourceMetadata: (req) => protectedResourceMetadataUrl(baseUrlOf(req)),
  };
  const mcpChallenges: Challenges = {
    resourceMetadata: (req) => protectedResourceMetadataUrl(baseUrlOf(req), MCP_PATH),
    invalidTokenDescription: 'The API key is invalid or revoked',
  };
  // Relative to the document, so "Try it out" calls the origin the page was loaded from (the
  // page's CSP allows no other); PUBLIC_BASE_URL, when set, is listed as well.
  const servers = [
    {
      url: basePath(deps.publicBaseUrl),
      description: 'This deployment (where this document is served)',
    },
    ...(deps.publicBaseUrl === undefined
      ? []
      : [{ url: deps.publicBaseUrl, description: 'This deployment (PUBLIC_BASE_URL)' }]),
  ];
  const openApiJson = JSON.stringify(deps.contract.servedDocument(servers));
  // First after the lifecycle: the agent operations are the traffic, and no other route lies
  // under their prefixes, so they skip matching every other route.
  mountAgentRoutes(app, {
    authenticate: authFor(restChallenges),
    rateLimiter: deps.rateLimiter,
    challenges: restChallenges,
    contract: deps.contract,
    operations: deps.operations,
    openApiJson,
  });
  mountHealth(app, deps.readiness);
  mountProtectedResource(app, baseUrlOf, {
    scopeCatalogue: deps.contract.scopeCatalogue,
    authorizationServers: deps.authorizationServers,
  });
  mountDocs(app);

  mountMcp(app, {
    logger: deps.logger,
    authenticate: authenticate(authFor(mcpChallenges)),
    challenges: mcpChallenges,
    rateLimiter: deps.rateLimiter,
    toolset: new McpToolset(deps.contract, deps.operations, deps.logger),
    allowedOrigins: deps.mcpAllowedOrigins,
  });

  app.use(notFound);
  app.use(errorHandler(deps.logger, deps.redactor));
  return app;
}
