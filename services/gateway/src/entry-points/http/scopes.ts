import { AppError } from '@support-agent/shared';
import type { Request, Response } from 'express';
import type { KeyGrant } from '../../domain/model.js';
import type { Scope } from '../../domain/scopes.js';
import { insufficientScopeChallenge, type Challenges } from './auth.js';
import { gatewayMetrics } from './http-metrics.js';

/** Throws 403 insufficient_scope (with the RFC 6750 challenge) unless the key holds `scope`. */
export function requireScope(
  grant: KeyGrant,
  scope: Scope,
  challenges: Challenges,
  req: Request,
  res: Response,
): void {
  if (grant.key.scopes.includes(scope)) return;
  gatewayMetrics.authFailures.inc({ reason: 'insufficient_scope' });
  res.setHeader('WWW-Authenticate', insufficientScopeChallenge(challenges, req, scope));
  throw new AppError(
    'insufficient_scope',
    `this operation needs an API key with the ${scope} scope`,
  );
}
