import { isUtf8 } from 'node:buffer';
import { invalidRequest } from '@support-agent/shared';
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
        requireUtf8Query,
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

/**
 * The query string must be percent-encoded UTF-8 (RFC 3986): raw bytes outside visible ASCII,
 * or escapes that decode to invalid UTF-8, are a 400 naming the parameter. (The query parser
 * would turn them into U+FFFD or Latin-1 characters and the request would run on text the
 * client never sent.)
 */
const requireUtf8Query: RequestHandler = (req, _res, next) => {
  const at = req.originalUrl.indexOf('?');
  if (at < 0) return next();
  const query = req.originalUrl.slice(at + 1);
  if (/[^\x21-\x7e]/.test(query)) {
    throw invalidRequest('the query string must be percent-encoded (RFC 3986)');
  }
  for (const pair of query.split('&')) {
    const eq = pair.indexOf('=');
    const name = eq < 0 ? pair : pair.slice(0, eq);
    for (const part of eq < 0 ? [name] : [name, pair.slice(eq + 1)]) {
      if (!part.includes('%')) continue;
      const bytes = Buffer.from(
        part.replace(/%([0-9A-Fa-f]{2})|[^%]+|%/g, (m: string, hex: string | undefined) =>
          hex === undefined ? m : String.fromCharCode(Number.parseInt(hex, 16)),
        ),
        'latin1',
      );
      if (!isUtf8(bytes)) {
        throw invalidRequest(
          'query parameters must be UTF-8 once percent-decoded',
          decodeQueryComponent(name),
        );
      }
    }
  }
  next();
};

/** A parameter name for error messages (best effort). */
function decodeQueryComponent(s: string): string {
  try {
    return decodeURIComponent(s.replace(/\+/g, ' '));
  } catch {
    return s;
  }
}

/** The query string as parsed by the 'simple' parser: strings, or arrays for repeats. */
const queryOf = (req: Request): Inputs => req.query as Inputs;

export function callerOf(req: Request, res: Response): Caller {
  const { key, settings } = grantOf(res);
  return { orgId: key.orgId, settings, requestId: String(req.id) };
}
