import { createHash, timingSafeEqual } from 'node:crypto';
import { AppError } from '@support-agent/shared';
import type { RequestHandler } from 'express';
import { readBearer } from '../http/auth.js';
import { gatewayMetrics } from '../http/http-metrics.js';

const digest = (s: string): Buffer => createHash('sha256').update(s, 'utf8').digest();

/** Bearer ADMIN_TOKEN, compared in constant time (hashes first, so lengths don't leak). */
export function adminAuth(adminToken: string): RequestHandler {
  const expected = digest(adminToken);
  return (req, res, next) => {
    const { key } = readBearer(req.headers.authorization);
    if (key !== undefined && timingSafeEqual(digest(key), expected)) return next();
    gatewayMetrics.authFailures.inc({ reason: 'invalid_admin_token' });
    res.set('WWW-Authenticate', 'Bearer realm="support-agent-admin"');
    throw new AppError(
      'unauthorized',
      key === undefined
        ? 'missing admin token: send Authorization: Bearer <ADMIN_TOKEN>'
        : 'invalid admin token',
    );
  };
}
