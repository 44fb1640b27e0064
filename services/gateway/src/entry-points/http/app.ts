import type { Logger } from '@support-agent/shared';
import express, { type Express } from 'express';
import { API_PREFIXES, type ApiContract } from '../../domain/api-contract.js';
import type { AgentOperations } from '../../domain/agent-operations.js';
import type { KeyResolver } from '../../domain/key-resolver.js';
import type { AuthFailureThrottle, RequestRateLimiter } from '../../domain/ports.js';
import { MCP_PATH, mountMcp } from '../mcp/mcp-routes.js';
import { McpToolset } from '../mcp/mcp-tools.js';
import { agentRouter } from './agent-routes.js';
import { authenticate, protectedResourceMetadataUrl, type Challenges } from './auth.js';
import { mountDocs } from './docs.js';
import { errorHandler, notFound } from './errors.js';
import { mountHealth, type ReadinessCheck } from './health.js';
import { httpMetrics } from './http-metrics.js';
import { mountProtectedResource } from './protected-resource.js';
import { accessLog, requestContext } from './request-context.js';

export interface PublicAppDeps {
  logger: Logger;
  publicBaseUrl: string;
  trustProxy: boolean | number | string;
  resolver: KeyResolver;
  authThrottle: AuthFailureThrottle;
  rateLimiter: RequestRateLimiter;
  /** The OpenAPI document (routes, scopes, limits, MCP tools). */
  contract: ApiContract;
  operations: AgentOperations;
  /** Browser origins allowed to call /api/mcp. */
  mcpAllowedOrigins: readonly string[];
  readinessChecks: ReadinessCheck[];
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

  app.use(requestContext(deps.shuttingDown));
  app.use(accessLog(deps.logger));
  app.use(httpMetrics(API_PREFIXES));

  mountHealth(app, deps.readinessChecks, deps.shuttingDown);
  mountProtectedResource(app, deps.publicBaseUrl, deps.contract.scopeCatalogue);
  mountDocs(app);

  const authFor = (challenges: Challenges) =>
    authenticate({ resolver: deps.resolver, throttle: deps.authThrottle, challenges });
  // REST challenges name the API's metadata, MCP challenges the MCP endpoint's (RFC 9728 §5.1).
  const restChallenges = { resourceMetadata: protectedResourceMetadataUrl(deps.publicBaseUrl) };
  const mcpChallenges = {
    resourceMetadata: protectedResourceMetadataUrl(deps.publicBaseUrl, MCP_PATH),
  };
  const openApiJson = JSON.stringify(deps.contract.servedDocument(deps.publicBaseUrl));
  app.use(
    [...API_PREFIXES],
    agentRouter({
      authenticate: authFor(restChallenges),
      rateLimiter: deps.rateLimiter,
      challenges: restChallenges,
      contract: deps.contract,
      operations: deps.operations,
      openApiJson,
    }),
  );
  mountMcp(app, {
    logger: deps.logger,
    authenticate: authFor(mcpChallenges),
    challenges: mcpChallenges,
    rateLimiter: deps.rateLimiter,
    toolset: new McpToolset(deps.contract, deps.operations, deps.logger),
    allowedOrigins: deps.mcpAllowedOrigins,
  });

  app.use(notFound);
  app.use(errorHandler(deps.logger));
  return app;
}
