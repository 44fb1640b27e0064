import { TABLE_OPTIONS, type Migration, type MigrationSet } from '@support-agent/shared';

const MIGRATIONS: Migration[] = [
  {
    version: 1,
    name: 'deflection ledger and org policies',
    statements: [
      // One counter row per org and UTC month, locked (SELECT … FOR UPDATE) by every
      // reserve/commit/release: used + reserved never exceeds the limit.
      `CREATE TABLE IF NOT EXISTS answers_deflection_months (
         org_id VARCHAR(64) NOT NULL,
         month CHAR(7) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
         used INT UNSIGNED NOT NULL DEFAULT 0,
         reserved INT UNSIGNED NOT NULL DEFAULT 0,
         updated_at DATETIME(3) NOT NULL,
         PRIMARY KEY (org_id, month)
       ) ${TABLE_OPTIONS}`,
      // One row per generation (request id = triage event id for automatic answers),
      // so a retried or redelivered request reuses its slot instead of taking another.
      `CREATE TABLE IF NOT EXISTS answers_deflection_reservations (
         request_id VARCHAR(100) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
         org_id VARCHAR(64) NOT NULL,
         month CHAR(7) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
         state VARCHAR(16) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
         expires_at DATETIME(3) NOT NULL,
         created_at DATETIME(3) NOT NULL,
         updated_at DATETIME(3) NOT NULL,
         PRIMARY KEY (request_id),
         KEY ix_answers_reservations_expiry (state, expires_at)
       ) ${TABLE_OPTIONS}`,
      `CREATE TABLE IF NOT EXISTS answers_org_policies (
         org_id VARCHAR(64) NOT NULL,
         deflection_monthly_limit INT UNSIGNED NOT NULL,
         high_confidence_threshold INT UNSIGNED NOT NULL,
         updated_at DATETIME(3) NOT NULL,
         PRIMARY KEY (org_id)
       ) ${TABLE_OPTIONS}`,
    ],
  },
];

/** The answers schema, in the subset MySQL 8 and MariaDB 10.11 share (runMigrations). */
export const SCHEMA: MigrationSet = { table: 'answers_schema_migrations', migrations: MIGRATIONS };
