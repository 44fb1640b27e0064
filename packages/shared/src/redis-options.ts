/**
 * The connection options of every Redis client (rate limits, idempotency lock). Redis is a
 * speed-up with an in-process fallback, never needed for correctness, so a client must never
 * make a request wait on it:
 * - no offline queue: while the connection is down or reopening, a command fails at once;
 * - a command not answered within `commandTimeoutMs` fails (the caller takes its fallback), and
 *   a socket that has received nothing that long after a write is dropped and reopened. A
 *   silent Redis (packets dropped, a frozen server, a link slower than the budget) is thereby
 *   treated exactly like a dead one: the first request waits `commandTimeoutMs`, the next ones
 *   fail at once until a new connection answers.
 *
 * Plain options (no ioredis import): each service spreads them into its own `new Redis()`.
 */
export interface FailFastRedisOptions {
  enableOfflineQueue: false;
  maxRetriesPerRequest: number;
  commandTimeout: number;
  socketTimeout: number;
  connectTimeout: number;
  retryStrategy: (attempt: number) => number;
}

/** Default of REDIS_COMMAND_TIMEOUT_MS. */
export const REDIS_COMMAND_TIMEOUT_MS = 250;

export function failFastRedisOptions(
  commandTimeoutMs: number = REDIS_COMMAND_TIMEOUT_MS,
): FailFastRedisOptions {
  return {
    enableOfflineQueue: false,
    maxRetriesPerRequest: 0,
    commandTimeout: commandTimeoutMs,
    socketTimeout: commandTimeoutMs,
    // A blackholed server never answers the SYN; try again soon after rather than wait long.
    connectTimeout: Math.max(1_000, 4 * commandTimeoutMs),
    retryStrategy: (attempt) => Math.min(attempt * 200, 1_000),
  };
}
