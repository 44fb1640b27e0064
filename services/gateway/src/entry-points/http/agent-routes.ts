import { isUtf8 } from 'node:buffer';
import { invalidRequest } from '@support-agent/shared';
import express, { type Request, type RequestHandler, type Response, type Router } from 'express';
import type { AgentOperationId, AgentRoute, ApiContract } from '../../domain/api-contract.js';
import type { AgentOperations, Caller, Inputs } from '../../domain/agent-operations.js';
import type { RequestRateLimiter } from '../../domain/ports.js';
import type { Challenges } from './auth.js';
import { methodNotAllowed, notFound } from './errors.js';
import { jsonBody } from './json-body.js';
import { countRequest, ReadAhead, rateLimit } from './rate-limit.js';
import { grantOf } from './request-context.js';
import { requireScope } from './scopes.js';

export interface AgentRouteDeps {
  authenticate: RequestHandler;
  rateLimiter: RequestRateLimiter;
  challenges: Challenges;
  contract: ApiContract;
  operations: AgentOperations;
  /** The OpenAPI document as served (servers: `/`, then PUBLIC_BASE_URL), serialized. */
  openApiJson: string;
}

const METHOD_ORDER = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE'];

/**
 * The five agent operations plus `/openapi.json`, mounted under both `/api/v1/agent` and
 * `/api/agent`; nothing in a response depends on the prefix but a 404's message (the path as
 * sent). Paths, methods, scopes and success statuses come from the OpenAPI document; the
 * operations themselves are shared with the MCP tools. Checks run in the contract's order: route (404/405), key (401), scope (403), rate limit
 * (429), body and parameters (400, 413), then the operation. Reads (GET) start while the rate
 * limit is being counted and are answered as the count decides (readCounted): the answer is
 * the one a read started after the count would give, without waiting for Redis first.
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

  const limit = rateLimit(deps.rateLimiter);
  const readAhead = new ReadAhead();
  const byPath = new Map<string, AgentRoute[]>();
  for (const r of deps.contract.routes) byPath.set(r.path, [...(byPath.get(r.path) ?? []), r]);
  for (const [path, routes] of byPath) {
    const route = router.route(path);
    for (const r of routes) {
      const handle = handlers[r.operationId];
      if (r.method === 'get') {
        route.get(
          deps.authenticate,
          requireScope(r.scope, deps.challenges),
          async (req: Request, res: Response) => {
            const body = await readCounted(deps.rateLimiter, readAhead, res, async () => {
              checkUtf8Query(req);
              return handle(req, callerOf(req, res));
            });
            res.status(r.successStatus).json(body);
          },
        );
        continue;
      }
      route[r.method](
        deps.authenticate,
        requireScope(r.scope, deps.challenges),
        limit,
        (req, _res, next) => {
          checkUtf8Query(req);
          next();
        },
        // Bodies are parsed only after the rate limit.
        ...jsonBody(),
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
 * A read, counted against the rate limits: started at once when the key has not been refused
 * lately (see ReadAhead), while the limits are counted, but answered only as the decision says.
 * A refused read is a 429 whatever the read did (its result or error is dropped), so the order
 * of checks (429 before 400) and the bodies are those of a read started after the count.
 * `read` is async, so its validation errors arrive as rejections, after the decision.
 */
async function readCounted<T>(
  limiter: RequestRateLimiter,
  readAhead: ReadAhead,
  res: Response,
  read: () => Promise<T>,
): Promise<T> {
  const keyId = grantOf(res).key.id;
  const early = readAhead.allows(keyId) ? read() : undefined;
  // A refused read's failure is dropped with it: never an unhandled rejection.
  early?.catch(() => undefined);
  const refused = await countRequest(limiter, res);
  readAhead.record(keyId, refused);
  if (refused) throw refused;
  return early ?? read();
}

/**
 * The query string must be percent-encoded UTF-8 (RFC 3986): raw bytes outside visible ASCII,
 * or escapes that decode to invalid UTF-8, are a 400 naming the parameter. (The query parser
 * would turn them into U+FFFD or Latin-1 characters and the request would run on text the
 * client never sent.)
 */
function checkUtf8Query(req: Request): void {
  const at = req.originalUrl.indexOf('?');
  if (at < 0) return;
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
}

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
