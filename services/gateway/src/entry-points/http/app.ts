import type { Logger } from '@support-agent/shared';
import express, { type Express } from 'express';
import type { AnswersClient } from '../../clients/answers.client.js';
import type { DigestClient } from '../../clients/digest.client.js';
import type { KnowledgeClient } from '../../clients/knowledge.client.js';
import type { TicketsClient } from '../../clients/tickets.client.js';
import type { KeyResolver } from '../../domain/key-resolver.js';
import { agentRouter } from './agent-routes.js';
import { authenticate, protectedResourceMetadataUrl } from './auth.js';
import { errorHandler, notFound } from './errors.js';
import { mountHealth, type ReadinessCheck } from './health.js';
import { mountProtectedResource } from './protected-resource.js';
import { rateLimit, type AuthFailureThrottle, type RequestRateLimiter } from './rate-limit.js';
import { accessLog, requestContext } from './request-context.js';

export const API_PREFIXES = ['/api/v1/agent', '/api/agent'];

export interface PublicAppDeps {
  logger: Logger;
  publicBaseUrl: string;
  trustProxy: boolean | number | string;
  resolver: KeyResolver;
  authThrottle: AuthFailureThrottle;
  rateLimiter: RequestRateLimiter;
  knowledge: KnowledgeClient;
  digest: DigestClient;
  tickets: TicketsClient;
  answers: AnswersClient;
  readinessChecks: ReadinessCheck[];
  shuttingDown: () => boolean;
}

/** The public HTTP API: both prefixes, probes, protected-resource metadata, JSON errors only. */
export function createPublicApp(deps: PublicAppDeps): Express {
  const app = express();
  app.disable('x-powered-by');
  app.set('etag', false);
  app.set('trust proxy', deps.trustProxy);
  app.set('query parser', 'simple');

  app.use(requestContext(deps.shuttingDown));
  app.use(accessLog(deps.logger));

  mountHealth(app, deps.readinessChecks, deps.shuttingDown);
  mountProtectedResource(app, deps.publicBaseUrl);

  const challenges = { resourceMetadata: protectedResourceMetadataUrl(deps.publicBaseUrl) };
  app.use(
    API_PREFIXES,
    agentRouter({
      authenticate: authenticate({
        resolver: deps.resolver,
        throttle: deps.authThrottle,
        challenges,
      }),
      rateLimit: rateLimit(deps.rateLimiter),
      challenges,
      knowledge: deps.knowledge,
      digest: deps.digest,
      tickets: deps.tickets,
      answers: deps.answers,
    }),
  );

  app.use(notFound);
  app.use(errorHandler(deps.logger));
  return app;
}
