import type { Express, NextFunction, Request, RequestHandler, Response } from 'express';
import {
  API_PREFIXES,
  type AgentOperationId,
  type AgentRoute,
  type ApiContract,
} from '../../domain/api-contract.js';
import type { AgentOperations, Caller, Inputs } from '../../domain/agent-operations.js';
import type { KeyGrant } from '../../domain/model.js';
import type { RequestRateLimiter } from '../../domain/ports.js';
import type { Authenticator, Challenges } from './auth.js';
import { methodNotAllowed } from './errors.js';
import { jsonBody } from './json-body.js';
import { sendJson } from './json-response.js';
import { countRequest, ReadAhead } from './rate-limit.js';
import { grantOf } from './request-context.js';
import { requireScope } from './scopes.js';
import { requireUtf8Url } from './url-text.js';

export interface AgentRouteDeps {
  authenticate: Authenticator;
  rateLimiter: RequestRateLimiter;
  challenges: Challenges;
  contract: ApiContract;
  operations: AgentOperations;
  /** The OpenAPI document as served (servers: `/`, then PUBLIC_BASE_URL), serialized. */
  openApiJson: string;
}

const METHOD_ORDER = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE'];

/**
 * The five agent operations plus `/openapi.json`, routed under both `/api/v1/agent` and
 * `/api/agent` (one route per prefix, on the app itself: a router mounted per prefix rewrote
 * the URL and restored it around every request); nothing in a response depends on the prefix,
 * and unknown paths below them get the app's 404 naming the path as sent. Paths, methods, scopes and success statuses come from the OpenAPI document; the
 * operations themselves are shared with the MCP tools. Checks run in the contract's order:
 * route (404/405), key (401), scope (403), rate limit (429), body and parameters (400, 413),
 * then the operation. Reads (GET) start while the rate limit is being counted and are answered
 * as the count decides (readCounted): the answer is the one a read started after the count
 * would give, without waiting for Redis first. Each route is one express handler doing the
 * checks in that order (plus the body parser for writes): every extra layer costs express's
 * dispatch on every request.
 */
export function mountAgentRoutes(app: Express, deps: AgentRouteDeps): void {
  const ops = deps.operations;
  const { authenticate, challenges, rateLimiter } = deps;
  const handlers: Record<AgentOperationId, (req: Request, caller: Caller) => Promise<unknown>> = {
    searchKnowledgeBase: (req, caller) =>
      ops.searchKnowledgeBaseJson(caller, queryOf(req), 'query'),
    getFaqDigest: (_req, caller) => ops.getFaqDigest(caller),
    listTickets: (req, caller) => ops.listTickets(caller, queryOf(req), 'query'),
    createTicket: (req, caller) =>
      ops.createTicket(caller, req.body as Inputs, 'body', req.headers['idempotency-key']),
    generateAnswer: (req, caller) => ops.generateAnswer(caller, req.body as Inputs, 'body'),
  };

  const readAhead = new ReadAhead();
  /** The handlers of one route: its checks in the contract's order, then the operation. */
  const handlersOf = (r: AgentRoute): RequestHandler[] => {
    const handle = handlers[r.operationId];
    /** 401, then 403: the caller's grant (at once when the key is cached). */
    const authorize = (req: Request, res: Response): KeyGrant | Promise<KeyGrant> => {
      const authenticated = authenticate(req, res);
      if (authenticated instanceof Promise) {
        return authenticated.then((grant) => {
          requireScope(grant, r.scope, challenges, req, res);
          return grant;
        });
      }
      requireScope(authenticated, r.scope, challenges, req, res);
      return authenticated;
    };

    if (r.method === 'get') {
      return [
        async (req: Request, res: Response) => {
          const authorized = authorize(req, res);
          const grant = authorized instanceof Promise ? await authorized : authorized;
          const body = await readCounted(rateLimiter, readAhead, grant, res, async () => {
            requireUtf8Url(req);
            return handle(req, callerOf(req, grant));
          });
          respond(res, r.successStatus, body);
        },
      ];
    }
    return [
      async (req: Request, res: Response, next: NextFunction) => {
        const authorized = authorize(req, res);
        const grant = authorized instanceof Promise ? await authorized : authorized;
        const exceeded = await countRequest(rateLimiter, grant, res);
        if (exceeded) throw exceeded;
        requireUtf8Url(req);
        next();
      },
      // Bodies are parsed only after the rate limit.
      ...jsonBody(),
      async (req: Request, res: Response) => {
        respond(res, r.successStatus, await handle(req, callerOf(req, grantOf(res))));
      },
    ];
  };

  const byPath = new Map<string, AgentRoute[]>();
  for (const r of deps.contract.routes) byPath.set(r.path, [...(byPath.get(r.path) ?? []), r]);
  for (const [path, routes] of byPath) {
    const underPrefixes = API_PREFIXES.map((prefix) => app.route(`${prefix}${path}`));
    for (const r of routes) {
      const routeHandlers = handlersOf(r);
      for (const route of underPrefixes) route[r.method](...routeHandlers);
    }
    const notAllowed = methodNotAllowed(allowedMethods(routes.map((r) => r.method)));
    for (const route of underPrefixes) route.all(notAllowed);
  }

  const notAllowed = methodNotAllowed(['GET', 'HEAD']);
  for (const prefix of API_PREFIXES) {
    app
      .route(`${prefix}/openapi.json`)
      .get((_req, res) => {
        res.set('Cache-Control', 'public, max-age=300');
        res.type('application/json').send(deps.openApiJson);
      })
      .all(notAllowed);
  }
}

/** The success response: serialized here unless the operation returned the bytes (search). */
function respond(res: Response, status: number, body: unknown): void {
  sendJson(res, status, body instanceof Uint8Array ? body : JSON.stringify(body));
}

function allowedMethods(methods: string[]): string[] {
  const allowed = new Set(methods.map((m) => m.toUpperCase()));
  if (allowed.has('GET')) allowed.add('HEAD'); // express answers HEAD with the GET route
  return METHOD_ORDER.filter((m) => allowed.has(m));
}

/**
 * A read, counted against the rate limits: started at once when the key has not been refused
 * lately (see ReadAhead), while the limits are counted, but answered only as the decision says.
 * A refused read is a 429 whatever the read did (its result or error is dropped), so the order
 * of checks (429 before 400) and the bodies are those of a read started after the count.
 * `read` is async, so its validation errors arrive as rejections, after the decision.
 */
async function readCounted<T>(
  limiter: RequestRateLimiter,
  readAhead: ReadAhead,
  grant: KeyGrant,
  res: Response,
  read: () => Promise<T>,
): Promise<T> {
  const keyId = grant.key.id;
  const early = readAhead.allows(keyId) ? read() : undefined;
  // A refused read's failure is dropped with it: never an unhandled rejection.
  early?.catch(() => undefined);
  const refused = await countRequest(limiter, grant, res);
  readAhead.record(keyId, refused);
  if (refused) throw refused;
  return early ?? read();
}

/** The query string as parsed by the 'simple' parser: strings, or arrays for repeats. */
const queryOf = (req: Request): Inputs => req.query as Inputs;

/** Who calls: the grant's organization and settings, and the request id. */
export function callerOf(req: Request, grant: KeyGrant): Caller {
  return { orgId: grant.key.orgId, settings: grant.settings, requestId: String(req.id) };
}
