import type { Pool } from 'mysql2/promise';
import type { Logger } from '../logger.js';

/** Engine and character set of every table the services create. */
export const TABLE_OPTIONS = 'ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci';

export interface Migration {
  version: number;
  name: string;
  /** Statements run in order; DDL is not transactional in MySQL, so keep each idempotent-safe. */
  statements: string[];
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
