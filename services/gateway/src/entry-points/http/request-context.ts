import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { invalidRequest, type Logger } from '@support-agent/shared';
import type { RequestHandler, Response } from 'express';
import { pinoHttp } from 'pino-http';
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

/** Access log: one JSON line per request with request id and org id; probes are not logged. */
export function accessLog(logger: Logger): RequestHandler {
  return pinoHttp({
    logger,
    quietReqLogger: true,
    genReqId: (req: IncomingMessage) => req.id ?? randomUUID(),
    customProps: (_req: IncomingMessage, res: ServerResponse) => {
      const locals = (res as unknown as { locals?: RequestLocals }).locals;
      const orgId = locals?.grant?.key.orgId;
      return orgId ? { orgId, keyId: locals.grant!.key.id } : {};
    },
    customLogLevel: (_req, res, err) =>
      err || res.statusCode === 500 ? 'error' : res.statusCode >= 500 ? 'warn' : 'info',
    // Failures are logged with their cause by the error middleware; no synthetic error here.
    customErrorObject: (_req, _res, _err, val: Record<string, unknown>) => ({
      ...val,
      err: undefined,
    }),
    customErrorMessage: (_req, res) => `request failed with status ${res.statusCode}`,
    autoLogging: { ignore: (req) => req.url === '/healthz' || req.url === '/readyz' },
    serializers: {
      req: (req: { id: unknown; method: string; url: string; remoteAddress?: string }) => ({
        id: req.id,
        method: req.method,
        url: redactKeys(req.url),
        remoteAddress: req.remoteAddress,
      }),
      res: (res: { statusCode: number }) => ({ statusCode: res.statusCode }),
    },
  }) as unknown as RequestHandler;
}
