import mysql, { type Pool, type PoolOptions } from 'mysql2/promise';
import type { Logger } from '../logger.js';
import { redactUrl } from '../logger.js';
import { sleep } from '../time.js';
import { runMigrations, type MigrationSet } from './migrations.js';
import { MYSQL_QUERY_TIMEOUT_MS, watchSilence } from './silence.js';

export type { Pool };

/** A MySQL/MariaDB pool with UTC timestamps and utf8mb4, from a mysql:// URL. */
export function createMysqlPool(url: string, options: Partial<PoolOptions> = {}): Pool {
  return mysql.createPool({
    uri: url,
    connectionLimit: 20,
    timezone: 'Z',
    dateStrings: false,
    charset: 'utf8mb4_unicode_ci',
    supportBigNumbers: true,
    bigNumberStrings: false,
    enableKeepAlive: true,
    connectTimeout: 5_000,
    // No stack capture per query (an Error per call, measurable on hot paths); errors still
    // carry their code and message.
    trace: false,
    ...options,
  });
}

/** Waits until the database answers, so a service started before MySQL retries instead of dying. */
export async function waitForMysql(
  pool: Pool,
  url: string,
  logger: Logger,
  timeoutMs = 60_000,
): Promise<void> {
  const until = Date.now() + timeoutMs;
  for (let attempt = 1; ; attempt++) {
    try {
      await pool.query('SELECT 1');
      return;
    } catch (err) {
      if (Date.now() > until)
        throw new Error(`MySQL at ${redactUrl(url)} is unreachable: ${(err as Error).message}`);
      logger.warn({ attempt, mysql: redactUrl(url) }, 'waiting for MySQL');
      await sleep(Math.min(2_000, 200 * attempt));
    }
  }
}

export interface OpenMysqlOptions {
  /** The service's migrations, applied before the pool is handed out. */
  schema: MigrationSet;
  /** Connections in the pool (default 20). */
  poolSize?: number | undefined;
  /** How long start-up waits for the server to answer (default 60 s). */
  connectTimeoutMs?: number | undefined;
  /**
   * A query unanswered this long drops its connection (watchSilence; default
   * MYSQL_QUERY_TIMEOUT_MS, 0 = no limit). Migrations run without it.
   */
  queryTimeoutMs?: number | undefined;
  /** Further mysql2 pool options (e.g. dateStrings, multipleStatements). */
  pool?: Partial<PoolOptions>;
}

/**
 * What every MySQL store does at start-up: a pool, a wait until the server answers, the
 * service's migrations; the pool is closed again when any of it fails. The pool handed out
 * drops a connection whose query goes unanswered (watchSilence): a silent server is treated
 * like a dead one.
 */
export async function openMysql(
  url: string,
  logger: Logger,
  options: OpenMysqlOptions,
): Promise<Pool> {
  const pool = createMysqlPool(url, {
    ...(options.poolSize ? { connectionLimit: options.poolSize } : {}),
    ...options.pool,
  });
  try {
    await waitForMysql(pool, url, logger, options.connectTimeoutMs);
    await runMigrations(pool, options.schema, logger);
    return watchSilence(pool, options.queryTimeoutMs ?? MYSQL_QUERY_TIMEOUT_MS);
  } catch (err) {
    await pool.end().catch(() => undefined);
    throw err;
  }
}
