// Experiment: how long the tickets migration to numbers per organization (migration 3) takes on
// a table the earlier version filled. A MariaDB of its own under a temp dir; `rows` tickets of
// `orgs` organizations created in turn, as the earlier version's one counter numbered them.
// Prints the time of each step and checks the result (every ticket's number = its id, one
// counter per organization at its highest).
//   npx tsx services/tickets/bench/numbers-migration.ts [rows=1000000] [orgs=50]
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import mysql from 'mysql2/promise';
import { createLogger, runMigrations } from '@support-agent/shared';
import { SCHEMA } from '../src/data-access/mysql/migrations.js';
import { ensureBackendPackages, startMariaDb } from '../../../test/support/backends.js';

const rows = Number(process.argv[2] ?? 1_000_000);
const orgs = Number(process.argv[3] ?? 50);
const BATCH = 5_000;
const NUMBERS_VERSION = 3;
const logger = createLogger('numbers-migration', 'warn');

await ensureBackendPackages();
const dir = mkdtempSync(join(tmpdir(), 'numbers-migration-'));
const mariadb = await startMariaDb(join(dir, 'mysql'));
const pool = mysql.createPool({ uri: mariadb.url, connectionLimit: 1 });
try {
  await runMigrations(
    pool,
    {
      table: SCHEMA.table,
      migrations: SCHEMA.migrations.filter((m) => m.version < NUMBERS_VERSION),
    },
    logger,
  );
  const start = Date.now() - rows * 10;
  let t0 = Date.now();
  for (let done = 0; done < rows; done += BATCH) {
    const values: unknown[][] = [];
    for (let i = done; i < Math.min(rows, done + BATCH); i++) {
      const at = new Date(start + i * 10);
      const status = ['open', 'in_progress', 'resolved', 'closed'][i % 4];
      values.push([`org-${i % orgs}`, `earlier ticket ${i}`, status, 'medium', at, at]);
    }
    await pool.query(
      'INSERT INTO tickets (org_id, content, status, priority, created_at, updated_at) VALUES ?',
      [values],
    );
  }
  console.log(`filled ${rows} tickets of ${orgs} organizations in ${Date.now() - t0} ms`);

  const numbers = SCHEMA.migrations.find((m) => m.version === NUMBERS_VERSION)!;
  const total = Date.now();
  for (const [i, step] of numbers.statements.entries()) {
    t0 = Date.now();
    // One step at a time through the runner (each recorded in a table of its own), so each is
    // timed as the service's start runs it.
    await runMigrations(
      pool,
      {
        table: `numbers_step_${i + 1}`,
        migrations: [{ ...numbers, statements: [step] }],
      },
      logger,
    );
    const sql = typeof step === 'string' ? step : step.sql;
    console.log(
      `step ${i + 1}: ${String(Date.now() - t0).padStart(7)} ms  ${sql.replace(/\s+/g, ' ').slice(0, 70)}`,
    );
  }
  console.log(`migration ${NUMBERS_VERSION} in all: ${Date.now() - total} ms for ${rows} tickets`);

  const [[check]] = (await pool.query(
    `SELECT (SELECT COUNT(*) FROM tickets WHERE number <> id) AS renumbered,
            (SELECT COUNT(*) FROM tickets_org_counters) AS counters,
            (SELECT COUNT(*) FROM tickets_org_counters c WHERE c.last_number <>
               (SELECT MAX(id) FROM tickets t WHERE t.org_id = c.org_id)) AS wrong`,
  )) as unknown as [[{ renumbered: number; counters: number; wrong: number }]];
  console.log(
    `check: ${check.renumbered} tickets renumbered, ${check.counters} counters, ${check.wrong} wrong`,
  );
  if (
    Number(check.renumbered) !== 0 ||
    Number(check.counters) !== orgs ||
    Number(check.wrong) !== 0
  )
    process.exitCode = 1;
} finally {
  await pool.end();
  await mariadb.stop();
  rmSync(dir, { recursive: true, force: true });
}
