import { AppError, type Logger } from '@support-agent/shared';
import type { ErrorRequestHandler, Request, RequestHandler, Response } from 'express';
import type { LogRedactor } from './log-redaction.js';

/** Codes whose responses always tell the client when to come back. */
const RETRYABLE = new Set(['rate_limited', 'deflection_limit_reached', 'service_unavailable']);

export function errorBody(err: AppError): {
  error: { message: string; code: string; param?: string };
} {
  return {
    error: {
      message: err.message,
      code: err.code,
      ...(err.param === undefined ? {} : { param: err.param }),
    },
  };
}

/** Writes the one error body of the API: `{"error":{"message","code","param?"}}`. */
export function sendError(res: Response, err: AppError): void {
  if (err.retryAfter !== undefined || RETRYABLE.has(err.code)) {
    res.set('Retry-After', String(Math.max(1, Math.ceil(err.retryAfter ?? 1))));
  }
  res.status(err.httpStatus).json(errorBody(err));
}

/** Errors raised by express and body-parser carry `status`/`type`; map them to the contract. */
interface HttpLikeError {
  status?: number;
  statusCode?: number;
  type?: string;
  limit?: number;
  /** The raw body, on parse failures. */
  body?: unknown;
}

/** True for valid JSON that strict parsing refused (a top-level string, number or null). */
function isJson(body: unknown): boolean {
  if (typeof body !== 'string') return false;
  try {
    JSON.parse(body);
    return true;
  } catch {
    return false;
  }
}

export function toAppError(err: unknown): AppError {
  if (err instanceof AppError) return err;
  const e = (err ?? {}) as HttpLikeError;
  const status = e.status ?? e.statusCode;
  switch (e.type) {
    case 'entity.too.large':
      return new AppError('payload_too_large', `request body exceeds ${formatBytes(e.limit)}`, {
        cause: err,
      });
    case 'entity.parse.failed':
      return new AppError(
        'invalid_request',
        isJson(e.body) ? 'request body must be a JSON object' : 'request body is not valid JSON',
        { cause: err },
      );
    case 'charset.unsupported':
      return new AppError('invalid_request', 'request body must be UTF-8 encoded JSON', {
        cause: err,
      });
    case 'encoding.unsupported':
      return new AppError('invalid_request', 'unsupported Content-Encoding', { cause: err });
    default:
      break;
  }
  if (status === 413)
    return new AppError('payload_too_large', 'request body too large', { cause: err });
  if (typeof status === 'number' && status >= 400 && status < 500) {
    return new AppError('invalid_request', 'malformed request', { cause: err });
  }
  return new AppError('internal_error', 'internal error', { cause: err });
}

function formatBytes(limit: number | undefined): string {
  if (limit === undefined) return 'the size limit';
  if (limit % (1024 * 1024) === 0) return `${limit / (1024 * 1024)} MiB`;
  return limit % 1024 === 0 ? `${limit / 1024} KiB` : `${limit} bytes`;
}

/**
 * The one error middleware: every failure becomes the JSON error body; a bug (anything that
 * is not a trusted AppError) is logged with the request id and answered as internal_error.
 */
export function errorHandler(logger: Logger, redactor: LogRedactor): ErrorRequestHandler {
  return (err: unknown, req: Request, res: Response, _next) => {
    const appError = toAppError(err);
    if (!appError.isTrusted) {
      logger.error(
        { err, reqId: req.id, method: req.method, path: redactor.url(req.originalUrl) },
        'request failed',
      );
    } else if (appError.code === 'service_unavailable') {
      const cause = appError.cause as { message?: string } | undefined;
      logger.warn(
        { reqId: req.id, path: redactor.url(req.originalUrl), cause: cause?.message },
        'backing service unavailable',
      );
    }
    if (res.headersSent) {
      // Too late for an error body: cut the connection so the client sees the failure.
      res.destroy();
      return;
    }
    sendError(
      res,
      appError.isTrusted ? appError : new AppError('internal_error', 'internal error'),
    );
  };
}

/**
 * Where OAuth clients look for an authorization server when a 401 names none (RFC 8414 and
 * OpenID discovery, with or without a path suffix; the MCP SDK's fallback endpoints).
 */
const OAUTH_CLIENT_PROBE =
  /^(?:\/\.well-known\/(?:oauth-authorization-server|openid-configuration)(?:\/.*)?|.*\/\.well-known\/openid-configuration|\/(?:register|authorize|token))$/;

/** Read by a person when an OAuth client gives up: what to configure instead. */
const NO_OAUTH_HINT =
  'this API has no OAuth authorization server: configure the client to send a valid API key ' +
  'in the header Authorization: Bearer <API key> (a 401 means the key was missing, unknown or ' +
  'revoked; see /docs)';

/**
 * 404 for any path no route claims, anywhere. The message names the path as the client sent it
 * (with the prefix a router was mounted on); OAuth discovery and registration paths say what to
 * do instead, since OAuth clients show that body when their login attempt fails.
 */
export const notFound: RequestHandler = (req, res) => {
  const full = `${req.baseUrl}${req.path}`;
  const path = full.length > 200 ? `${full.slice(0, 200)}…` : full;
  const hint = OAUTH_CLIENT_PROBE.test(full) ? `; ${NO_OAUTH_HINT}` : '';
  sendError(res, new AppError('not_found', `no such path: ${path}${hint}`));
};

/** 405 for a known path with a method it does not serve. */
export function methodNotAllowed(allow: string[]): RequestHandler {
  const header = allow.join(', ');
  return (req, res) => {
    res.set('Allow', header);
    sendError(
      res,
      new AppError('method_not_allowed', `${req.method} is not allowed here; allowed: ${header}`),
    );
  };
}
