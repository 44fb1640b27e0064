import { AppError } from '@support-agent/shared';
import type { Response } from 'express';
import type { KeyGrant } from '../../domain/model.js';
import { WINDOW_SECONDS, type RequestRateLimiter } from '../../domain/ports.js';
import { gatewayMetrics } from './http-metrics.js';

// The HTTP side of the rate limits: the counters are the RequestRateLimiter port
// (data-access/rate-limit/), this turns their decision into headers and 429s.

/**
 * Which keys may have a read started before its rate-limit decision is back. A GET (search,
 * FAQ, list) changes nothing, so the gateway sends it upstream while Redis counts it and
 * answers only once the count allowed it: the caller waits for the slower of the two round
 * trips instead of their sum. A key that was refused waits for its decisions again until its
 * window resets, so a client over its limit costs the services at most the reads it had in
 * flight when the limit ran out, never one per refused request.
 */
export class ReadAhead {
  /** Key id → epoch ms until which its reads wait for the decision. */
  private readonly refusedUntil = new Map<string, number>();

  constructor(
    private readonly maxKeys = 10_000,
    private readonly now: () => number = Date.now,
  ) {}

  allows(keyId: string): boolean {
    const until = this.refusedUntil.get(keyId);
    if (until === undefined) return true;
    if (until > this.now()) return false;
    this.refusedUntil.delete(keyId);
    return true;
  }

  /** Notes a decision: a refusal holds the key's reads back for its Retry-After. */
  record(keyId: string, refused: AppError | undefined): void {
    if (!refused) return;
    this.refusedUntil.delete(keyId);
    if (this.refusedUntil.size >= this.maxKeys) {
      // Oldest refusal first (insertion order); forgetting one only allows a read ahead.
      this.refusedUntil.delete(this.refusedUntil.keys().next().value!);
    }
    this.refusedUntil.set(keyId, this.now() + (refused.retryAfter ?? WINDOW_SECONDS) * 1000);
  }
}

/**
 * Counts the authenticated request (`cost` requests: an MCP batch costs one per message)
 * against its key and organization and sets the RateLimit
 * headers; returns the 429 error when either is exhausted (the caller decides how to report it).
 */
export async function countRequest(
  limiter: RequestRateLimiter,
  grant: KeyGrant,
  res: Response,
  cost = 1,
): Promise<AppError | undefined> {
  const { key, settings } = grant;
  const decision = await limiter.consume(
    key.id,
    settings.rateLimitPerKeyPerMin,
    key.orgId,
    settings.rateLimitPerOrgPerMin,
    cost,
  );
  res.setHeader('RateLimit-Policy', decision.policyHeader);
  res.setHeader('RateLimit', decision.limitHeader);
  if (decision.allowed) return undefined;
  for (const policy of decision.refusedBy) gatewayMetrics.rateLimitRejections.inc({ policy });
  return new AppError('rate_limited', 'rate limit exceeded; retry after the time in Retry-After', {
    retryAfter: decision.retryAfter,
  });
}
