import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { DEFAULT_NEGOTIATED_PROTOCOL_VERSION } from '@modelcontextprotocol/sdk/types.js';
import { AppError, loneSurrogatePath, type Logger } from '@support-agent/shared';
import express, { type Express, type Request, type RequestHandler, type Response } from 'express';
import type { RequestRateLimiter } from '../../domain/ports.js';
import { loneSurrogateError } from '../../domain/validation.js';
import { callerOf } from '../http/agent-routes.js';
import { insufficientScopeChallenge, type Challenges } from '../http/auth.js';
import { errorBody, methodNotAllowed, toAppError } from '../http/errors.js';
import { PUBLIC_BODY_LIMIT, requireUtf8 } from '../http/json-body.js';
import { countRequest } from '../http/rate-limit.js';
import { grantOf } from '../http/request-context.js';
import type { McpToolset } from './mcp-tools.js';

export const MCP_PATH = '/api/mcp';

export interface McpRouteDeps {
  logger: Logger;
  /** The REST authentication, with challenges naming the MCP resource metadata. */
  authenticate: RequestHandler;
  challenges: Challenges;
  rateLimiter: RequestRateLimiter;
  toolset: McpToolset;
  /** Browser origins allowed to call; any other `Origin` header gets 403. */
  allowedOrigins: readonly string[];
}

interface McpLocals {
  /** The body could not be read (malformed JSON, too large). */
  bodyError?: AppError;
  /** Where the body holds text with a lone UTF-16 surrogate (see loneSurrogatePath). */
  illFormedAt?: string;
  /** Over the rate limit on a single tools/call: reported as a tool error. */
  rejection?: AppError;
}

const mcpLocals = (res: Response): McpLocals => res.locals as McpLocals;

interface JsonRpcMessage {
  method?: unknown;
  params?: { name?: unknown };
}

function messagesOf(body: unknown): JsonRpcMessage[] {
  const list = Array.isArray(body) ? body : [body];
  return list.filter((m): m is JsonRpcMessage => typeof m === 'object' && m !== null);
}

/**
 * `POST /api/mcp`: the MCP Streamable HTTP transport, stateless (a server and transport per
 * request, JSON responses, no sessions). GET (server-initiated streams, not offered) and DELETE
 * (no sessions to end) are 405. Checks, in order: Origin (403), key (401, the REST
 * authentication), the scope of each tool called (403 with the insufficient_scope challenge),
 * the rate limit (every request counts, a batch one per message; 429, or a tool error for a
 * single tools/call; see limitRate), then the
 * SDK's own protocol checks. Tools run the REST operations (see McpToolset); tools/list shows a
 * key the tools its scopes allow.
 */
export function mountMcp(app: Express, deps: McpRouteDeps): void {
  app
    .route(MCP_PATH)
    .all(checkOrigin(deps.allowedOrigins))
    .post(
      deps.authenticate,
      readBody(),
      requireToolScopes(deps),
      limitRate(deps.rateLimiter),
      handleMcp(deps),
    )
    .all(methodNotAllowed(['POST']));
}

/**
 * Browsers send `Origin`; a page from another site must not reach the endpoint (DNS rebinding,
 * cross-site calls with a stored key). Requests without Origin (agents, CLIs) pass.
 */
function checkOrigin(allowed: readonly string[]): RequestHandler {
  return (req, res, next) => {
    const origin = req.headers.origin;
    if (origin === undefined || allowed.includes(origin)) return next();
    // Not an API error code of DESIGN.md §3 (those are the REST operations'), hence written here.
    res.status(403).json({
      error: {
        message: `requests from origin ${origin.slice(0, 200)} are not allowed`,
        code: 'origin_not_allowed',
      },
    });
  };
}

/** JSON body (≤ 64 KiB); failures are kept for after the rate limit, like the REST routes. */
function readBody(): RequestHandler {
  const parse = express.json({
    limit: PUBLIC_BODY_LIMIT,
    strict: true,
    type: () => true,
    verify: requireUtf8,
  });
  return (req, res, next) => {
    void parse(req, res, (err?: unknown) => {
      if (err) mcpLocals(res).bodyError = toAppError(err);
      else mcpLocals(res).illFormedAt = loneSurrogatePath(req.body);
      next();
    });
  };
}

/** A tools/call whose tool needs a scope the key lacks is refused at the HTTP level. */
function requireToolScopes(deps: McpRouteDeps): RequestHandler {
  return (req, res, next) => {
    const scopes = grantOf(res).key.scopes;
    for (const message of messagesOf(req.body)) {
      if (message.method !== 'tools/call') continue;
      const tool = deps.toolset.tool(message.params?.name);
      if (!tool || scopes.includes(tool.scope)) continue;
      res.set('WWW-Authenticate', insufficientScopeChallenge(deps.challenges, req, tool.scope));
      throw new AppError(
        'insufficient_scope',
        `the tool ${tool.name} needs an API key with the ${tool.scope} scope`,
      );
    }
    next();
  };
}

/** Messages one HTTP request may batch (older protocol versions only). */
export const MCP_MAX_BATCH = 100;
/** The first MCP protocol version without JSON-RPC batching. */
const NO_BATCHES_FROM = '2025-06-18';

/** Why a batch is refused before any of it runs, or undefined when it may run. */
function batchRefusal(req: Request, batch: unknown[]): string | undefined {
  const version = req.headers['mcp-protocol-version'] ?? DEFAULT_NEGOTIATED_PROTOCOL_VERSION;
  // Protocol versions are dates (YYYY-MM-DD): they compare as strings.
  if (typeof version === 'string' && version >= NO_BATCHES_FROM) {
    return `Invalid Request: JSON-RPC batches are not part of MCP protocol version ${version} (removed in ${NO_BATCHES_FROM}); send one message per HTTP request`;
  }
  if (batch.length > MCP_MAX_BATCH) {
    return `Invalid Request: a batch may hold at most ${MCP_MAX_BATCH} messages (got ${batch.length})`;
  }
  return undefined;
}

/**
 * The rate limit. A JSON-RPC batch (protocol versions before 2025-06-18) costs one request per
 * message, counted before any of it runs; when the key or the organization has fewer left,
 * the whole batch is refused (HTTP 429 with Retry-After, nothing runs). A batch the protocol
 * version does not allow, or of more than 100 messages, costs one request and is refused with
 * HTTP 400 and JSON-RPC error -32600.
 */
function limitRate(limiter: RequestRateLimiter): RequestHandler {
  return async (req, res, next) => {
    const batch: unknown[] | undefined = Array.isArray(req.body) ? req.body : undefined;
    const refusal = batch && batchRefusal(req, batch);
    const cost = batch && !refusal ? Math.max(1, batch.length) : 1;
    const exceeded = await countRequest(limiter, grantOf(res), res, cost);
    if (refusal && !exceeded) {
      res.status(400).json({ jsonrpc: '2.0', error: { code: -32600, message: refusal }, id: null });
      return;
    }
    if (exceeded) {
      const messages = Array.isArray(req.body) ? [] : messagesOf(req.body);
      // A lone tool call gets a tool error the model can read; anything else a plain 429.
      if (messages.length !== 1 || messages[0]!.method !== 'tools/call') throw exceeded;
      mcpLocals(res).rejection = exceeded;
    }
    next();
  };
}

function handleMcp(deps: McpRouteDeps): RequestHandler {
  return async (req, res) => {
    const { bodyError, rejection, illFormedAt } = mcpLocals(res);
    if (bodyError?.code === 'payload_too_large') throw bodyError;
    if (bodyError || req.body === undefined) {
      // What the SDK transport answers to an unparseable body.
      res.status(400).json({
        jsonrpc: '2.0',
        error: { code: -32700, message: `Parse error: ${bodyError?.message ?? 'empty body'}` },
        id: null,
      });
      return;
    }
    if (illFormedAt !== undefined) {
      // Refused whole, before any call runs: the text cannot be passed on unchanged.
      const error = loneSurrogateError(illFormedAt);
      res.status(400).json({
        jsonrpc: '2.0',
        error: {
          code: /^(?:\[\d+\]\.)?params\b/.test(illFormedAt) ? -32602 : -32600,
          message: error.message,
          data: errorBody(error),
        },
        id: null,
      });
      return;
    }
    const server = deps.toolset.createServer({
      caller: callerOf(req, grantOf(res)),
      scopes: grantOf(res).key.scopes,
      rejection,
    });
    const transport = new StreamableHTTPServerTransport({
      sessionIdGenerator: undefined,
      enableJsonResponse: true,
    });
    transport.onerror = (err) =>
      deps.logger.debug({ err, reqId: req.id }, 'MCP request rejected by the transport');
    res.on('close', () => void server.close());
    await server.connect(transport);
    await transport.handleRequest(req, res, req.body);
  };
}
