import type { Logger } from '@support-agent/shared';
import express, { type Express } from 'express';
import type { AnswersClient } from '../../clients/answers.client.js';
import type { DigestClient } from '../../clients/digest.client.js';
import type { KnowledgeClient } from '../../clients/knowledge.client.js';
import type { TicketsClient } from '../../clients/tickets.client.js';
import type { OrgAdmin } from '../../domain/orgs.js';
import { errorHandler, notFound } from '../http/errors.js';
import { httpMetrics } from '../http/http-metrics.js';
import { accessLog, requestContext } from '../http/request-context.js';
import { adminAuth } from './admin-auth.js';
import { adminRouter } from './admin-routes.js';

export interface AdminAppDeps {
  logger: Logger;
  adminToken: string;
  orgs: OrgAdmin;
  tickets: TicketsClient;
  knowledge: KnowledgeClient;
  digest: DigestClient;
  answers: AnswersClient;
  /** Ticket status values (the OpenAPI document's TicketStatus enum). */
  ticketStatuses: readonly string[];
  shuttingDown: () => boolean;
}

/** The admin API, served on its own listener (ADMIN_HOST:ADMIN_PORT). */
export function createAdminApp(deps: AdminAppDeps): Express {
  const app = express();
  app.disable('x-powered-by');
  app.set('etag', false);
  app.set('query parser', 'simple');

  app.use(requestContext(deps.shuttingDown));
  app.use(accessLog(deps.logger.child({ listener: 'admin' })));
  app.use(httpMetrics(['/admin/v1']));
  app.use(
    '/admin/v1',
    adminRouter({
      auth: adminAuth(deps.adminToken),
      orgs: deps.orgs,
      tickets: deps.tickets,
      knowledge: deps.knowledge,
      digest: deps.digest,
      answers: deps.answers,
      ticketStatuses: deps.ticketStatuses,
    }),
  );
  app.use(notFound);
  app.use(errorHandler(deps.logger));
  return app;
}
