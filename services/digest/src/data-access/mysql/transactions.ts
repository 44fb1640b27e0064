import { AppError, type Pool } from '@support-agent/shared';
import type { PoolConnection } from 'mysql2/promise';

const RETRYABLE = new Set(['ER_LOCK_DEADLOCK', 'ER_LOCK_WAIT_TIMEOUT']);
const UNREACHABLE = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EPIPE',
  'PROTOCOL_CONNECTION_LOST',
  'ER_CON_COUNT_ERROR',
  'ER_SERVER_SHUTDOWN',
  'POOL_CLOSED',
]);

/**
 * Runs `fn` in a READ COMMITTED transaction (no gap locks, so concurrent
 * first-inserts of different tickets never deadlock), retrying deadlocks and
 * lock-wait timeouts, and, with `retryDuplicates`, a lost insert race.
 */
export async function inTransaction<T>(
  pool: Pool,
  fn: (conn: PoolConnection) => Promise<T>,
  options: { retryDuplicates?: boolean; attempts?: number } = {},
): Promise<T> {
  const attempts = options.attempts ?? 5;
  for (let attempt = 1; ; attempt++) {
    const conn = await pool.getConnection().catch((err: unknown) => {
      throw unavailable(err);
    });
    try {
      await conn.query('SET TRANSACTION ISOLATION LEVEL READ COMMITTED');
      await conn.beginTransaction();
      const result = await fn(conn);
      await conn.commit();
      return result;
    } catch (err) {
      await conn.rollback().catch(() => undefined);
      const code = (err as { code?: string }).code ?? '';
      const retry =
        RETRYABLE.has(code) || (options.retryDuplicates === true && code === 'ER_DUP_ENTRY');
      if (retry && attempt < attempts) {
        await new Promise((r) => setTimeout(r, 5 * attempt + Math.random() * 10));
        continue;
      }
      throw unavailable(err);
    } finally {
      conn.release();
    }
  }
}

/** Connection-level failures become service_unavailable; anything else is passed on. */
export function unavailable(err: unknown): unknown {
  const code = (err as { code?: string })?.code;
  if (code && UNREACHABLE.has(code)) {
    return new AppError('service_unavailable', 'the digest database is unavailable', {
      retryAfter: 1,
      cause: err,
    });
  }
  return err;
}

/** Runs a query function, mapping connection failures to service_unavailable. */
export async function guarded<T>(fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (err) {
    throw unavailable(err);
  }
}
