import { AppError } from '@support-agent/shared';
import type { Request, RequestHandler, Response } from 'express';
import { isWellFormedApiKey } from '../../domain/api-keys.js';
import type { KeyResolver } from '../../domain/key-resolver.js';
import type { KeyGrant } from '../../domain/model.js';
import type { AuthFailureThrottle } from '../../domain/ports.js';
import { gatewayMetrics, type AuthFailureReason } from './http-metrics.js';
import { localsOf } from './request-context.js';

export interface Challenges {
  /** resource_metadata URL of RFC 9728, for the base URL the request was sent to. */
  resourceMetadata: (req: Request) => string;
  /**
   * RFC 6750 §3 `error_description` added to `error="invalid_token"` (MCP: clients that speak
   * OAuth show it instead of a bare 401).
   */
  invalidTokenDescription?: string;
}

export const WELL_KNOWN = '/.well-known/oauth-protected-resource';

/**
 * The RFC 9728 metadata URL of a resource: the well-known suffix inserted between the base URL
 * and the resource's path (`''` = the whole API, `/api/mcp` = the MCP endpoint).
 */
export function protectedResourceMetadataUrl(publicBaseUrl: string, resourcePath = ''): string {
  return `${publicBaseUrl}${WELL_KNOWN}${resourcePath}`;
}

/**
 * `WWW-Authenticate` of a 401; `error="invalid_token"` only when a key was presented: RFC 6750
 * §3 asks for no error information when none was.
 */
export function unauthorizedChallenge(c: Challenges, req: Request, keyPresented: boolean): string {
  const base = `Bearer realm="support-agent", resource_metadata="${c.resourceMetadata(req)}"`;
  if (!keyPresented) return base;
  const description = c.invalidTokenDescription;
  return description === undefined
    ? `${base}, error="invalid_token"`
    : `${base}, error="invalid_token", error_description="${description}"`;
}

/** `WWW-Authenticate` of a 403 naming the scope the operation needs. */
export function insufficientScopeChallenge(c: Challenges, req: Request, scope: string): string {
  return `Bearer error="insufficient_scope", scope="${scope}", resource_metadata="${c.resourceMetadata(req)}"`;
}

export interface PresentedCredentials {
  /** The Authorization header uses the Bearer scheme with a non-empty credential. */
  presented: boolean;
  key: string | undefined;
  /** Some Authorization header was sent (maybe with another scheme). */
  headerSent: boolean;
}

/** Parses `Authorization: Bearer <key>`; the scheme is case-insensitive. */
export function readBearer(header: string | undefined): PresentedCredentials {
  if (header === undefined || header.trim() === '')
    return { presented: false, key: undefined, headerSent: false };
  const m = /^([A-Za-z][A-Za-z0-9!#$%&'*+.^_`|~-]*)(?:[ \t]+(.*))?$/.exec(header.trim());
  if (!m || m[1]!.toLowerCase() !== 'bearer')
    return { presented: false, key: undefined, headerSent: true };
  const key = (m[2] ?? '').trim();
  return key === ''
    ? { presented: false, key: undefined, headerSent: true }
    : { presented: true, key, headerSent: true };
}

/**
 * Authenticates a request: its grant (also left in res.locals), or a rejection with the 401 or
 * 429 error. A grant served from the key cache is returned without a promise, so the hot path
 * waits for nothing.
 */
export type Authenticator = (req: Request, res: Response) => KeyGrant | Promise<KeyGrant>;

/**
 * Authenticates the bearer key. A key that fails the checksum is rejected without a lookup;
 * a cached valid key skips the failure throttle; otherwise an IP over its failed-auth budget
 * gets 429 for anything but a valid key. Failures are counted per client IP.
 */
export function keyAuthenticator(deps: {
  resolver: KeyResolver;
  throttle: AuthFailureThrottle;
  challenges: Challenges;
}): Authenticator {
  const { resolver, throttle, challenges } = deps;
  const uncached = async (
    req: Request,
    res: Response,
    creds: PresentedCredentials,
    wellFormed: boolean,
  ): Promise<KeyGrant> => {
    const ip = req.ip ?? req.socket.remoteAddress ?? 'unknown';
    const blockedFor = await throttle.blockedFor(ip);
    if (blockedFor !== undefined && !wellFormed) {
      await throttle.recordFailure(ip);
      authFailed('blocked');
      throw tooManyFailures(blockedFor);
    }

    const grant = wellFormed ? await resolver.resolve(creds.key!) : undefined;
    if (grant) {
      localsOf(res).grant = grant;
      return grant;
    }

    const retryAfter = await throttle.recordFailure(ip);
    authFailed(
      creds.presented ? 'invalid_key' : creds.headerSent ? 'unsupported_scheme' : 'missing',
    );
    if (retryAfter !== undefined) throw tooManyFailures(retryAfter);
    res.setHeader('WWW-Authenticate', unauthorizedChallenge(challenges, req, creds.presented));
    throw new AppError(
      'unauthorized',
      creds.presented
        ? 'invalid or revoked API key'
        : creds.headerSent
          ? 'unsupported authorization scheme: send Authorization: Bearer <API key>'
          : 'missing API key: send Authorization: Bearer <API key>',
    );
  };
  return (req, res) => {
    const creds = readBearer(req.headers.authorization);
    const wellFormed = creds.key !== undefined && isWellFormedApiKey(creds.key);
    const cached = wellFormed ? resolver.cachedGrant(creds.key!) : undefined;
    if (cached) {
      localsOf(res).grant = cached;
      return cached;
    }
    return uncached(req, res, creds, wellFormed);
  };
}

/** An Authenticator as express middleware (the MCP route). */
export function authenticate(authenticator: Authenticator): RequestHandler {
  return (req, res, next) => {
    const grant = authenticator(req, res);
    if (grant instanceof Promise) return grant.then(() => next());
    next();
  };
}

function authFailed(reason: AuthFailureReason): void {
  gatewayMetrics.authFailures.inc({ reason });
}

function tooManyFailures(retryAfter: number): AppError {
  gatewayMetrics.rateLimitRejections.inc({ policy: 'authfail' });
  return new AppError('rate_limited', 'too many failed authentication attempts from this address', {
    retryAfter,
  });
}
