import { counter, histogram } from '@support-agent/shared';
import type { Request, Response } from 'express';

/** The gateway's own Prometheus metrics (gRPC client metrics come from shared's interceptor). */
export const gatewayMetrics = {
  httpRequests: counter(
    'http_requests_total',
    'HTTP requests answered, by route pattern, method and status.',
    ['route', 'method', 'status'],
  ),
  httpDuration: histogram(
    'http_request_duration_seconds',
    'Time to answer an HTTP request, by route pattern and method.',
    ['route', 'method'],
  ),
  rateLimitRejections: counter(
    'rate_limit_rejections_total',
    'Requests answered 429 by a rate limit, by policy (key, org, authfail).',
    ['policy'],
  ),
  authFailures: counter(
    'auth_failures_total',
    'Requests that failed authentication or authorization, by reason.',
    ['reason'],
  ),
};

export type RateLimitPolicy = 'key' | 'org' | 'authfail';
export type AuthFailureReason =
  | 'missing'
  | 'unsupported_scheme'
  | 'invalid_key'
  | 'blocked'
  | 'insufficient_scope'
  | 'invalid_admin_token';

// Known label values start at 0, so rates and absent-series alerts work from the first scrape.
for (const policy of ['key', 'org', 'authfail'] satisfies RateLimitPolicy[])
  gatewayMetrics.rateLimitRejections.inc({ policy }, 0);
for (const reason of [
  'missing',
  'unsupported_scheme',
  'invalid_key',
  'blocked',
  'insufficient_scope',
  'invalid_admin_token',
] satisfies AuthFailureReason[])
  gatewayMetrics.authFailures.inc({ reason }, 0);

/** Requests that are not traffic (probes): neither counted nor logged. */
export const PROBES: ReadonlySet<string> = new Set(['/healthz', '/readyz']);

/**
 * Records http_requests_total / http_request_duration_seconds of a finished response (called
 * by requestLifecycle). The route label is the matched route pattern under its mount point (one
 * of `mounts`), never the raw URL: requests no route matched are `unmatched`.
 */
export function recordHttpRequest(
  req: Request,
  res: Response,
  seconds: number,
  mounts: readonly string[],
): void {
  const route = routeOf(req, mounts);
  const method = req.method;
  gatewayMetrics.httpRequests.inc({ route, method, status: res.statusCode });
  gatewayMetrics.httpDuration.observe({ route, method }, seconds);
}

function routeOf(req: Request, mounts: readonly string[]): string {
  const pattern = (req.route as { path?: unknown } | undefined)?.path;
  if (typeof pattern !== 'string') return 'unmatched';
  // req.baseUrl is the URL's own spelling (any case) and is reset once an error leaves the
  // router, so the mount is recognised from the URL among the known ones instead.
  const url = req.originalUrl.toLowerCase();
  const mount = mounts.find((m) => url === m || url.startsWith(`${m}/`)) ?? '';
  return `${mount}${pattern}`;
}
