import mysql, { type Pool, type PoolOptions } from 'mysql2/promise';
import type { Logger } from './logger.js';
import { redactUrl } from './logger.js';

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

export interface Migration {
  version: number;
  name: string;
  /** Statements run in order; DDL is not transactional in MySQL, so keep each idempotent-safe. */
  statements: string[];
}

/**
 * Applies versioned migrations once each, recorded in `<table>`. A named lock
 * serialises concurrent starters (several replicas booting at once).
 */
export async function runMigrations(
  pool: Pool,
  table: string,
  migrations: Migration[],
  logger: Logger,
): Promise<void> {
  const conn = await pool.getConnection();
  try {
    const [lockRows] = await conn.query('SELECT GET_LOCK(?, 60) AS got', [`migrate:${table}`]);
    if ((lockRows as Array<{ got: number }>)[0]?.got !== 1) {
      throw new Error(`could not take the migration lock for ${table}`);
    }
    try {
      await conn.query(
        `CREATE TABLE IF NOT EXISTS \`${table}\` (
           version INT NOT NULL PRIMARY KEY,
           name VARCHAR(200) NOT NULL,
           applied_at DATETIME(3) NOT NULL DEFAULT CURRENT_TIMESTAMP(3)
         ) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci`,
      );
      const [rows] = await conn.query(`SELECT version FROM \`${table}\``);
      const applied = new Set((rows as Array<{ version: number }>).map((r) => r.version));
      for (const m of [...migrations].sort((a, b) => a.version - b.version)) {
        if (applied.has(m.version)) continue;
        for (const sql of m.statements) await conn.query(sql);
        await conn.query(`INSERT INTO \`${table}\` (version, name) VALUES (?, ?)`, [
          m.version,
          m.name,
        ]);
        logger.info({ table, version: m.version, migration: m.name }, 'migration applied');
      }
    } finally {
      await conn.query('SELECT RELEASE_LOCK(?)', [`migrate:${table}`]);
    }
  } finally {
    conn.release();
  }
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
      await new Promise((r) => setTimeout(r, Math.min(2_000, 200 * attempt)));
    }
  }
}

export function isDuplicateKeyError(err: unknown): boolean {
  return (err as { code?: string })?.code === 'ER_DUP_ENTRY';
}
