import mysql from 'mysql2/promise';
import { randomBytes } from 'node:crypto';

/**
 * Creates a fresh, empty database on the test MariaDB server (TEST_MYSQL_URL)
 * and returns its URL, so each test file starts from nothing.
 */
export async function createTestDatabase(
  prefix = 't',
): Promise<{ url: string; drop(): Promise<void> }> {
  const base = process.env.TEST_MYSQL_URL;
  if (!base) throw new Error('TEST_MYSQL_URL is not set: run tests through `npm test`');
  const name = `${prefix}_${randomBytes(4).toString('hex')}`;
  const conn = await mysql.createConnection({ uri: base });
  try {
    await conn.query(
      `CREATE DATABASE \`${name}\` CHARACTER SET utf8mb4 COLLATE utf8mb4_unicode_ci`,
    );
  } finally {
    await conn.end();
  }
  const url = new URL(base);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    async drop() {
      const c = await mysql.createConnection({ uri: base });
      try {
        await c.query(`DROP DATABASE IF EXISTS \`${name}\``);
      } finally {
        await c.end();
      }
    },
  };
}

export function requireEnv(name: string): string {
  const v = process.env[name];
  if (!v) throw new Error(`${name} is not set: run tests through \`npm test\``);
  return v;
}
