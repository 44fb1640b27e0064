import { randomUUID } from 'node:crypto';
import { invalidRequest, type Logger } from '@support-agent/shared';
import type { Request, RequestHandler, Response } from 'express';
import type { KeyGrant } from '../../domain/model.js';
import { PROBES, recordHttpRequest } from './http-metrics.js';
import type { LogRedactor } from './log-redaction.js';

const SANE_REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/** Per-request state kept in res.locals. */
export interface RequestLocals {
  /** Set by authentication. */
  grant?: KeyGrant;
}

export function localsOf(res: Response): RequestLocals {
  return res.locals as RequestLocals;
}

/** The authenticated grant; only call after authentication ran. */
export function grantOf(res: Response): KeyGrant {
  const grant = localsOf(res).grant;
  if (!grant) throw new Error('route reached without authentication');
  return grant;
}

export interface LifecycleOptions {
  /** True once shutdown began: keep-alive clients are told to reconnect elsewhere. */
  draining: () => boolean;
  /** Access log destination (see accessLine). */
  logger: Logger;
  /** Mount points the metrics' route label is taken under (see recordHttpRequest). */
  mounts: readonly string[];
  /** Cuts credentials out of the logged URL. */
  redactor: LogRedactor;
}

/**
 * First middleware of both listeners: request id (the client's when sane, else a UUID) on the
 * request and the response, the headers every response carries, and one `close` listener that
 * writes the access log line and the HTTP metrics once the response is done (Node emits
 * `close` after `finish`, or alone when the client went away first). One middleware and one
 * listener instead of three and three: each express layer and listener costs on every request.
 */
export function requestLifecycle(options: LifecycleOptions): RequestHandler {
  const { draining, mounts, redactor } = options;
  // The access line's fields are fixed below and hold no credentials (the URL's are cut by the
  // redactor), so the logger's redaction, which walks every nested object of every line
  // (about half of the line's cost), is left out for it.
  const logger = options.logger.child({}, { redact: [] });
  return (req, res, next) => {
    const given = req.headers['x-request-id'];
    const id = typeof given === 'string' && SANE_REQUEST_ID.test(given) ? given : randomUUID();
    req.id = id;
    res.setHeader('X-Request-Id', id);
    res.setHeader('X-Content-Type-Options', 'nosniff');
    res.setHeader('Cache-Control', 'no-store');
    // While draining, tell keep-alive clients to reconnect (to another replica).
    if (draining()) res.setHeader('Connection', 'close');
    if (!PROBES.has(req.path)) {
      const startedAt = performance.now();
      res.once('close', () => {
        const ms = performance.now() - startedAt;
        const finished = res.writableFinished;
        if (finished) recordHttpRequest(req, res, ms / 1000, mounts);
        logAccess(logger, redactor, req, res, ms, !finished);
      });
    }
    // RFC 9112 §3.2: an HTTP/1.1 request without Host is a 400 (the server lets it through to
    // answer here, in JSON, rather than with Node's bare 400).
    if (req.httpVersion === '1.1' && req.headers.host === undefined) {
      res.setHeader('Connection', 'close');
      throw invalidRequest('the Host header is required', 'Host');
    }
    next();
  };
}

/**
 * Access log: one JSON line per request when its response is finished (or the client went
 * away first), with request id, org and key id once authenticated, status and response time;
 * probes are not logged. Written directly with the service logger instead of through
 * pino-http, which builds a child logger for every request (≈ 5 % of the gateway's CPU per
 * request in profiles) that nothing here uses.
 */
function logAccess(
  logger: Logger,
  redactor: LogRedactor,
  req: Request,
  res: Response,
  responseMs: number,
  aborted: boolean,
): void {
  const status = res.statusCode;
  const grant = localsOf(res).grant;
  const line = {
    reqId: req.id,
    req: {
      id: req.id,
      method: req.method,
      url: redactor.url(req.originalUrl),
      remoteAddress: req.socket.remoteAddress,
    },
    res: { statusCode: status },
    responseTime: Math.round(responseMs),
    ...(grant ? { orgId: grant.key.orgId, keyId: grant.key.id } : {}),
  };
  if (aborted) logger.info(line, 'request aborted by the client');
  else if (status === 500) logger.error(line, `request failed with status ${status}`);
  else if (status >= 500) logger.warn(line, `request failed with status ${status}`);
  else logger.info(line, 'request completed');
}

declare module 'node:http' {
  interface IncomingMessage {
    /** The request id (X-Request-Id), set by requestLifecycle. */
    id?: string;
  }
}
