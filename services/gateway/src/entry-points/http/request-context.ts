import { randomUUID } from 'node:crypto';
import { invalidRequest, type Logger } from '@support-agent/shared';
import type { RequestHandler, Response } from 'express';
import type { KeyGrant } from '../../domain/model.js';

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

/**
 * First middleware of both listeners: request id (the client's when sane, else a UUID) on the
 * request and the response, and the headers every response carries.
 */
export function requestContext(draining: () => boolean): RequestHandler {
  return (req, res, next) => {
    const given = req.headers['x-request-id'];
    req.id = typeof given === 'string' && SANE_REQUEST_ID.test(given) ? given : randomUUID();
    res.set('X-Request-Id', String(req.id));
    res.set('X-Content-Type-Options', 'nosniff');
    res.set('Cache-Control', 'no-store');
    // While draining, tell keep-alive clients to reconnect (to another replica).
    if (draining()) res.set('Connection', 'close');
    // RFC 9112 §3.2: an HTTP/1.1 request without Host is a 400 (the server lets it through to
    // answer here, in JSON, rather than with Node's bare 400).
    if (req.httpVersion === '1.1' && req.headers.host === undefined) {
      res.set('Connection', 'close');
      throw invalidRequest('the Host header is required', 'Host');
    }
    next();
  };
}

/**
 * API keys pasted into a URL by mistake (`?api_key=sak_live_…`, a key as the search query or
 * as a path) are cut to their 12-character display prefix before the URL is logged.
 */
export function redactKeys(text: string): string {
  return text.replace(/(sak_live_[0-9A-Za-z]{3})[0-9A-Za-z]+/g, '$1…[redacted]');
}

/**
 * Access log: one JSON line per request when its response is finished (or the client went
 * away first), with request id, org and key id once authenticated, status and response time;
 * probes are not logged. Written directly with the service logger instead of through
 * pino-http, which builds a child logger for every request (≈ 5 % of the gateway's CPU per
 * request in profiles) that nothing here uses.
 */
export function accessLog(logger: Logger): RequestHandler {
  return (req, res, next) => {
    if (req.url === '/healthz' || req.url === '/readyz') return next();
    const startedAt = performance.now();
    let logged = false;
    const log = (aborted: boolean) => {
      if (logged) return;
      logged = true;
      const status = res.statusCode;
      const grant = localsOf(res).grant;
      const line = {
        reqId: req.id,
        req: {
          id: req.id,
          method: req.method,
          url: redactKeys(req.originalUrl),
          remoteAddress: req.socket.remoteAddress,
        },
        res: { statusCode: status },
        responseTime: Math.round(performance.now() - startedAt),
        ...(grant ? { orgId: grant.key.orgId, keyId: grant.key.id } : {}),
      };
      if (aborted) logger.info(line, 'request aborted by the client');
      else if (status === 500) logger.error(line, `request failed with status ${status}`);
      else if (status >= 500) logger.warn(line, `request failed with status ${status}`);
      else logger.info(line, 'request completed');
    };
    res.once('finish', () => log(false));
    res.once('close', () => log(!res.writableFinished));
    next();
  };
}

declare module 'node:http' {
  interface IncomingMessage {
    /** The request id (X-Request-Id), set by requestContext. */
    id?: string;
  }
}
