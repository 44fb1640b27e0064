import type { Pool } from 'mysql2/promise';
import type { Logger } from '../logger.js';

/** Engine and character set of every table the services create. */
export const TABLE_OPTIONS = 'ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci';

export interface Migration {
  version: number;
  name: string;
  /**
   * Steps run in order. DDL is not transactional in MySQL: a migration cut off half-way runs
   * again from its first step, so each step must be safe to repeat (`IF NOT EXISTS`, a guard).
   */
  statements: MigrationStep[];
}

/**
 * A statement, or one that runs only while `unless` (a query) finds no row: for a change the
 * subset MySQL 8 and MariaDB share cannot repeat safely (`ADD COLUMN IF NOT EXISTS` is
 * MariaDB's alone). Build guards with `unlessColumn` and `unlessIndex`.
 */
export type MigrationStep = string | { sql: string; unless: string };

/** `sql`, skipped when `table` already has `column` (a repeat after an interrupted migration). */
export function unlessColumn(table: string, column: string, sql: string): MigrationStep {
  return {
    sql,
    unless: `SELECT 1 FROM information_schema.columns WHERE table_schema = DATABASE()
               AND table_name = '${table}' AND column_name = '${column}'`,
  };
}

/** `sql`, skipped when `table` already has the index `index`. */
export function unlessIndex(table: string, index: string, sql: string): MigrationStep {
  return {
    sql,
    unless: `SELECT 1 FROM information_schema.statistics WHERE table_schema = DATABASE()
               AND table_name = '${table}' AND index_name = '${index}'`,
  };
}

/**
 * A service's schema: its migrations, recorded in its own `table` (e.g.
 * `tickets_schema_migrations`). Never edit a released migration; add a new one.
 */
export interface MigrationSet {
  table: string;
  migrations: Migration[];
}

/**
 * Applies a service's migrations once each, recorded in `schema.table`. A named lock
 * serialises concurrent starters (several replicas booting at once).
 */
export async function runMigrations(
  pool: Pool,
  schema: MigrationSet,
  logger: Logger,
): Promise<void> {
  const { table, migrations } = schema;
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
         ) ${TABLE_OPTIONS}`,
      );
      const [rows] = await conn.query(`SELECT version FROM \`${table}\``);
      const applied = new Set((rows as Array<{ version: number }>).map((r) => r.version));
      for (const m of [...migrations].sort((a, b) => a.version - b.version)) {
        if (applied.has(m.version)) continue;
        for (const step of m.statements) {
          if (typeof step === 'string') await conn.query(step);
          else if (((await conn.query(step.unless))[0] as unknown[]).length === 0)
            await conn.query(step.sql);
        }
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
