import { isUtf8 } from 'node:buffer';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { AppError } from '@support-agent/shared';
import express, { type Request, type RequestHandler } from 'express';
import { rejectLoneSurrogates, requireObjectBody } from '../../domain/validation.js';

export const PUBLIC_BODY_LIMIT = 64 * 1024;

/**
 * body-parser `verify` hook: the raw body must be UTF-8. Without it, invalid bytes were decoded
 * to U+FFFD and the request accepted with text the client never sent.
 */
export function requireUtf8(_req: IncomingMessage, _res: ServerResponse, buf: Buffer): void {
  if (!isUtf8(buf)) {
    throw new AppError('invalid_request', 'request body must be UTF-8 encoded JSON');
  }
}

/** True when a request carries no body bytes at all. */
function hasNoBody(req: Request): boolean {
  const length = req.headers['content-length'];
  return req.headers['transfer-encoding'] === undefined && (length === undefined || length === '0');
}

/**
 * JSON body parsing for POST/PATCH routes, placed after authentication, scope and rate-limit
 * checks. Content-Type must be application/json (parameters such as charset allowed); the
 * body must be a JSON object of at most `limit` bytes (413 payload_too_large beyond).
 * Text holding a lone UTF-16 surrogate (`"\\ud800"`) is refused, naming the field.
 * With `allowEmpty`, a request without a body counts as `{}` (every field optional).
 */
export function jsonBody(
  limit: number = PUBLIC_BODY_LIMIT,
  options: { allowEmpty?: boolean } = {},
): RequestHandler[] {
  const parse = express.json({ limit, strict: true, type: () => true, verify: requireUtf8 });
  const requireJson: RequestHandler = (req, _res, next) => {
    if (options.allowEmpty && hasNoBody(req)) return next();
    const type = (req.headers['content-type'] ?? '').split(';')[0]!.trim().toLowerCase();
    if (type !== 'application/json') {
      throw new AppError('invalid_request', 'Content-Type must be application/json', {
        param: 'Content-Type',
      });
    }
    next();
  };
  const requireObject: RequestHandler = (req, _res, next) => {
    if (options.allowEmpty && req.body === undefined) req.body = {};
    requireObjectBody(req.body);
    rejectLoneSurrogates(req.body);
    next();
  };
  return [requireJson, parse, requireObject];
}
