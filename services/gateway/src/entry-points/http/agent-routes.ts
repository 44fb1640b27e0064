import express, { type Request, type RequestHandler, type Response, type Router } from 'express';
import type { AgentOperationId, AgentRoute, ApiContract } from '../../domain/api-contract.js';
import type { AgentOperations, Caller, Inputs } from '../../domain/agent-operations.js';
import type { Challenges } from './auth.js';
import { methodNotAllowed, notFound } from './errors.js';
import { jsonBody } from './json-body.js';
import { grantOf } from './request-context.js';
import { requireScope } from './scopes.js';

export interface AgentRouteDeps {
  authenticate: RequestHandler;
  rateLimit: RequestHandler;
  challenges: Challenges;
  contract: ApiContract;
  operations: AgentOperations;
  /** The OpenAPI document as served (servers = PUBLIC_BASE_URL), serialized. */
  openApiJson: string;
}

const METHOD_ORDER = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE'];

/**
 * The five agent operations plus `/openapi.json`, mounted under both `/api/v1/agent` and
 * `/api/agent`; nothing in a response depends on the prefix. Paths, methods, scopes and success
 * statuses come from the OpenAPI document; the operations themselves are shared with the MCP
 * tools. Checks run in the contract's order: route (404/405), key (401), scope (403), rate limit
 * (429), body and parameters (400, 413), then the operation.
 */
export function agentRouter(deps: AgentRouteDeps): Router {
  const router = express.Router();
  const ops = deps.operations;
  const handlers: Record<AgentOperationId, (req: Request, caller: Caller) => Promise<unknown>> = {
    searchKnowledgeBase: (req, caller) => ops.searchKnowledgeBase(caller, queryOf(req), 'query'),
    getFaqDigest: (_req, caller) => ops.getFaqDigest(caller),
    listTickets: (req, caller) => ops.listTickets(caller, queryOf(req), 'query'),
    createTicket: (req, caller) =>
      ops.createTicket(caller, req.body as Inputs, 'body', req.headers['idempotency-key']),
    generateAnswer: (req, caller) => ops.generateAnswer(caller, req.body as Inputs, 'body'),
  };

  const byPath = new Map<string, AgentRoute[]>();
  for (const r of deps.contract.routes) byPath.set(r.path, [...(byPath.get(r.path) ?? []), r]);
  for (const [path, routes] of byPath) {
    const route = router.route(path);
    for (const r of routes) {
      const handle = handlers[r.operationId];
      route[r.method](
        deps.authenticate,
        requireScope(r.scope, deps.challenges),
        deps.rateLimit,
        // Bodies are parsed only after the rate limit (and only for methods that have one).
        ...(r.method === 'get' ? [] : jsonBody()),
        async (req: Request, res: Response) => {
          res.status(r.successStatus).json(await handle(req, callerOf(req, res)));
        },
      );
    }
    route.all(methodNotAllowed(allowedMethods(routes.map((r) => r.method))));
  }

  router
    .route('/openapi.json')
    .get((_req, res) => {
      res.set('Cache-Control', 'public, max-age=300');
      res.type('application/json').send(deps.openApiJson);
    })
    .all(methodNotAllowed(['GET', 'HEAD']));

  // Paths relative to the mount point, so both prefixes answer byte-identically.
  router.use(notFound);
  return router;
}

function allowedMethods(methods: string[]): string[] {
  const allowed = new Set(methods.map((m) => m.toUpperCase()));
  if (allowed.has('GET')) allowed.add('HEAD'); // express answers HEAD with the GET route
  return METHOD_ORDER.filter((m) => allowed.has(m));
}

/** The query string as parsed by the 'simple' parser: strings, or arrays for repeats. */
const queryOf = (req: Request): Inputs => req.query as Inputs;

export function callerOf(req: Request, res: Response): Caller {
  const { key, settings } = grantOf(res);
  return { orgId: key.orgId, settings, requestId: String(req.id) };
}
