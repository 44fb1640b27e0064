import { AppError } from '@support-agent/shared';
import type { RequestHandler } from 'express';
import type { Scope } from '../../domain/scopes.js';
import { insufficientScopeChallenge, type Challenges } from './auth.js';
import { gatewayMetrics } from './http-metrics.js';
import { grantOf } from './request-context.js';

/** 403 insufficient_scope (with the RFC 6750 challenge) unless the key holds `scope`. */
export function requireScope(scope: Scope, challenges: Challenges): RequestHandler {
  return (req, res, next) => {
    if (grantOf(res).key.scopes.includes(scope)) return next();
    gatewayMetrics.authFailures.inc({ reason: 'insufficient_scope' });
    res.set('WWW-Authenticate', insufficientScopeChallenge(challenges, req, scope));
    throw new AppError(
      'insufficient_scope',
      `this operation needs an API key with the ${scope} scope`,
    );
  };
}
