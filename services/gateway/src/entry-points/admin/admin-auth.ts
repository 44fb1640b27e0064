import { createHash, timingSafeEqual } from 'node:crypto';
import { AppError } from '@support-agent/shared';
import type { RequestHandler } from 'express';
import type { AuthFailureThrottle } from '../../domain/ports.js';
import { readBearer } from '../http/auth.js';
import { gatewayMetrics } from '../http/http-metrics.js';

const digest = (s: string): Buffer => createHash('sha256').update(s, 'utf8').digest();

function tooManyFailures(retryAfter: number): AppError {
  gatewayMetrics.rateLimitRejections.inc({ policy: 'authfail' });
  return new AppError('rate_limited', 'too many failed authentication attempts from this address', {
    retryAfter,
  });
}

/**
 * Bearer ADMIN_TOKEN, compared in constant time (hashes first, so lengths don't leak). Wrong
 * or missing tokens are counted per client IP like wrong API keys (AUTH_FAILURES_PER_MIN_PER_IP,
 * on their own counters): over the budget, the IP gets 429 with Retry-After for every request,
 * the right token included, so guessing cannot go on and learn from the answers.
 */
export function adminAuth(adminToken: string, throttle: AuthFailureThrottle): RequestHandler {
  const expected = digest(adminToken);
  return async (req, res, next) => {
    const ip = req.ip ?? req.socket.remoteAddress ?? 'unknown';
    const blockedFor = await throttle.blockedFor(ip);
    if (blockedFor !== undefined) {
      await throttle.recordFailure(ip);
      gatewayMetrics.authFailures.inc({ reason: 'blocked' });
      throw tooManyFailures(blockedFor);
    }
    const { key } = readBearer(req.headers.authorization);
    if (key !== undefined && timingSafeEqual(digest(key), expected)) return next();
    gatewayMetrics.authFailures.inc({ reason: 'invalid_admin_token' });
    const retryAfter = await throttle.recordFailure(ip);
    if (retryAfter !== undefined) throw tooManyFailures(retryAfter);
    res.set('WWW-Authenticate', 'Bearer realm="support-agent-admin"');
    throw new AppError(
      'unauthorized',
      key === undefined
        ? 'missing admin token: send Authorization: Bearer <ADMIN_TOKEN>'
        : 'invalid admin token',
    );
  };
}
