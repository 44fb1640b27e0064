import type { Logger } from '@support-agent/shared';
import express, { type Express } from 'express';
import type { OrgAdmin } from '../../domain/orgs.js';
import type {
  AnswersUpstream,
  AuthFailureThrottle,
  DigestUpstream,
  KnowledgeUpstream,
  TicketsUpstream,
  TriageUpstream,
} from '../../domain/ports.js';
import { errorHandler, methodNotAllowed, notFound } from '../http/errors.js';
import type { Readiness } from '../http/health.js';
import type { LogRedactor } from '../http/log-redaction.js';
import { requestLifecycle } from '../http/request-context.js';
import { utf8Url } from '../http/url-text.js';
import { adminAuth } from './admin-auth.js';
import { adminRouter } from './admin-routes.js';

export interface AdminAppDeps {
  logger: Logger;
  /** Cuts credentials out of logged URLs (the admin token among them). */
  redactor: LogRedactor;
  adminToken: string;
  /** Failed admin authentications per client IP. */
  authThrottle: AuthFailureThrottle;
  orgs: OrgAdmin;
  tickets: TicketsUpstream;
  knowledge: KnowledgeUpstream;
  digest: DigestUpstream;
  answers: AnswersUpstream;
  triage: TriageUpstream;
  /** Ticket status values (the OpenAPI document's TicketStatus enum). */
  ticketStatuses: readonly string[];
  /** Dependency checks: their details are served here (`GET /admin/v1/readyz`). */
  readiness: Readiness;
  shuttingDown: () => boolean;
}

/** The admin API, served on its own listener (ADMIN_HOST:ADMIN_PORT). */
export function createAdminApp(deps: AdminAppDeps): Express {
  const app = express();
  app.disable('x-powered-by');
  app.set('etag', false);
  app.set('query parser', 'simple');

  app.use(
    requestLifecycle({
      draining: deps.shuttingDown,
      logger: deps.logger.child({ listener: 'admin' }),
      mounts: ['/admin/v1'],
      redactor: deps.redactor,
    }),
  );
  const auth = adminAuth(deps.adminToken, deps.authThrottle);
  app
    .route('/admin/v1/readyz')
    .get(auth, deps.readiness.detailed())
    .all(methodNotAllowed(['GET', 'HEAD']));
  app.use(
    '/admin/v1',
    utf8Url,
    adminRouter({
      auth,
      orgs: deps.orgs,
      tickets: deps.tickets,
      knowledge: deps.knowledge,
      digest: deps.digest,
      answers: deps.answers,
      triage: deps.triage,
      ticketStatuses: deps.ticketStatuses,
    }),
  );
  app.use(notFound);
  app.use(errorHandler(deps.logger, deps.redactor));
  return app;
}
