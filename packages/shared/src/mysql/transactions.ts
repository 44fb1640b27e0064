import type { Pool, PoolConnection } from 'mysql2/promise';
import { AppError } from '../errors.js';
import { storageFull } from '../storage-full.js';
import { sleep } from '../time.js';

/**
 * Deadlock (errno 1213) and lock wait timeout (errno 1205): InnoDB rolled the statement or the
 * transaction back and nothing was written, so the whole transaction is safe to run again.
 */
const LOCK_CONFLICT_CODES = new Set(['ER_LOCK_DEADLOCK', 'ER_LOCK_WAIT_TIMEOUT']);
const LOCK_CONFLICT_ERRNOS = new Set([1213, 1205]);

/** Errors that mean "the database is unreachable or overloaded", not "this call is wrong". */
const UNAVAILABLE_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'ENOTFOUND',
  'EHOSTUNREACH',
  'EPIPE',
  'PROTOCOL_CONNECTION_LOST',
  'PROTOCOL_SEQUENCE_TIMEOUT',
  'ER_CON_COUNT_ERROR',
  'ER_SERVER_SHUTDOWN',
  'POOL_CLOSED',
]);

type MysqlError = { code?: string; errno?: number; fatal?: boolean } | undefined;

/** True for a deadlock or lock wait timeout: the transaction may simply run again. */
export function isLockConflict(err: unknown): boolean {
  const e = err as MysqlError;
  return (
    (e?.code !== undefined && LOCK_CONFLICT_CODES.has(e.code)) ||
    (e?.errno !== undefined && LOCK_CONFLICT_ERRNOS.has(e.errno))
  );
}

export function isDuplicateKeyError(err: unknown): boolean {
  return (err as MysqlError)?.code === 'ER_DUP_ENTRY';
}

/** True when the error says the database is down, unreachable or overloaded (lock conflicts too). */
export function isMysqlUnavailable(err: unknown): boolean {
  const e = err as MysqlError;
  return (
    e?.fatal === true ||
    (e?.code !== undefined && UNAVAILABLE_CODES.has(e.code)) ||
    isLockConflict(err)
  );
}

/**
 * An unreachable, overloaded or full database becomes service_unavailable (retryable: 503 with
 * Retry-After at the gateway) naming `what` ("the tickets database"); anything else, an
 * AppError included, passes through unchanged.
 */
export function mysqlUnavailable(err: unknown, what: string): unknown {
  if (err instanceof AppError) return err;
  // A full disk: the statement was refused and rolled back; it succeeds once space is freed.
  const full = storageFull(err, what);
  if (full !== err) return full;
  if (!isMysqlUnavailable(err)) return err;
  return new AppError('service_unavailable', `${what} is unavailable`, {
    retryAfter: 1,
    cause: err,
  });
}

export interface TransactionOptions {
  /** e.g. READ COMMITTED: no gap locks, so concurrent first inserts of different rows never deadlock. */
  isolation?: 'READ COMMITTED' | 'REPEATABLE READ';
  /** Runs in all, the first included (default 3). 1 = no retry (a body with side effects). */
  attempts?: number;
  /** Also run again after a duplicate key: a racing first insert that now exists. */
  retryDuplicates?: boolean;
  /**
   * The body sends START TRANSACTION … COMMIT itself, as one multi-statement query; a
   * statement that fails stops the rest, and the transaction is rolled back here as usual.
   */
  inOneQuery?: boolean;
  /** Told before each retry (to log it). */
  onRetry?: (code: string, attempt: number) => void;
  /** Maps the error that ends the call (after the last attempt), e.g. to service_unavailable. */
  mapError?: (err: unknown) => unknown;
}

/**
 * Runs `fn` in one transaction on a pooled connection and commits; on a deadlock or lock wait
 * timeout (and, when asked, a duplicate key) rolls back and runs it again after a short jittered
 * pause. A connection whose rollback failed is in an unknown state and is destroyed, not reused.
 */
export async function withTransaction<T>(
  pool: Pool,
  fn: (conn: PoolConnection) => Promise<T>,
  options: TransactionOptions = {},
): Promise<T> {
  const attempts = options.attempts ?? 3;
  const mapError = options.mapError ?? ((err: unknown) => err);
  for (let attempt = 1; ; attempt++) {
    const conn = await pool.getConnection().catch((err: unknown) => {
      throw mapError(err);
    });
    let healthy = true;
    try {
      if (options.inOneQuery) return await fn(conn);
      if (options.isolation)
        await conn.query(`SET TRANSACTION ISOLATION LEVEL ${options.isolation}`);
      await conn.beginTransaction();
      const result = await fn(conn);
      await conn.commit();
      return result;
    } catch (err) {
      // A fatal error (a lost or desynchronized connection): never reused.
      if ((err as MysqlError)?.fatal === true) healthy = false;
      else
        await conn.rollback().catch(() => {
          healthy = false;
        });
      const retry =
        isLockConflict(err) || (options.retryDuplicates === true && isDuplicateKeyError(err));
      if (retry && attempt < attempts) {
        options.onRetry?.((err as MysqlError)?.code ?? 'unknown', attempt);
        await sleep(attempt * (2 + Math.random() * 8));
        continue;
      }
      throw mapError(err);
    } finally {
      if (healthy) conn.release();
      else conn.destroy();
    }
  }
}

/** Runs one query function, mapping errors (e.g. an outage to service_unavailable). */
export async function mapMysqlErrors<T>(
  fn: () => Promise<T>,
  mapError: (err: unknown) => unknown,
): Promise<T> {
  try {
    return await fn();
  } catch (err) {
    throw mapError(err);
  }
}
