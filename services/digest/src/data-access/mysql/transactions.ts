import {
  mapMysqlErrors,
  mysqlUnavailable,
  withTransaction,
  type Pool,
  type TransactionOptions,
} from '@support-agent/shared';
import type { PoolConnection } from 'mysql2/promise';

const unavailable = (err: unknown): unknown => mysqlUnavailable(err, 'the digest database');

/**
 * Runs `fn` in a READ COMMITTED transaction (no gap locks, so concurrent first-inserts of
 * different tickets never deadlock), up to 5 times (or `attempts`) after deadlocks and, with
 * `retryDuplicates`, a lost insert race. With `inOneQuery`, `fn` starts the transaction (at
 * READ COMMITTED) and commits it itself.
 */
export function inTransaction<T>(
  pool: Pool,
  fn: (conn: PoolConnection) => Promise<T>,
  options: Pick<TransactionOptions, 'retryDuplicates' | 'inOneQuery' | 'attempts'> = {},
): Promise<T> {
  return withTransaction(pool, fn, {
    isolation: 'READ COMMITTED',
    attempts: 5,
    mapError: unavailable,
    ...options,
  });
}

/** Runs a query function, mapping an unreachable database to service_unavailable. */
export function guarded<T>(fn: () => Promise<T>): Promise<T> {
  return mapMysqlErrors(fn, unavailable);
}
