import { TABLE_OPTIONS, type Migration, type MigrationSet } from '@support-agent/shared';

const MIGRATIONS: Migration[] = [
  {
    version: 1,
    name: 'processed events, ticket and week aggregates, digests, leases, runs',
    statements: [
      // One row per applied event id, inserted in the same transaction as the aggregate change.
      `CREATE TABLE IF NOT EXISTS digest_processed_events (
         event_id VARCHAR(64) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
         processed_at DATETIME(3) NOT NULL,
         PRIMARY KEY (event_id)
       ) ${TABLE_OPTIONS}`,
      // week_start/created_at stay NULL until the ticket's created event arrives; the
      // (org_id, week_start, created_at, ticket_id) index serves the digest build.
      `CREATE TABLE IF NOT EXISTS digest_tickets (
         org_id VARCHAR(64) NOT NULL,
         ticket_id BIGINT UNSIGNED NOT NULL,
         week_start DATE NULL,
         created_at DATETIME(3) NULL,
         content TEXT NULL,
         category VARCHAR(32) NULL,
         status VARCHAR(20) NULL,
         status_at DATETIME(3) NULL,
         triaged_at DATETIME(3) NULL,
         answered TINYINT(1) NOT NULL DEFAULT 0,
         ai_summary TEXT NULL,
         ai_answer MEDIUMTEXT NULL,
         PRIMARY KEY (org_id, ticket_id),
         KEY ix_digest_tickets_week (org_id, week_start, created_at, ticket_id)
       ) ${TABLE_OPTIONS}`,
      `CREATE TABLE IF NOT EXISTS digest_weeks (
         org_id VARCHAR(64) NOT NULL,
         week_start DATE NOT NULL,
         ticket_count INT UNSIGNED NOT NULL,
         PRIMARY KEY (org_id, week_start),
         KEY ix_digest_weeks_week (week_start, org_id)
       ) ${TABLE_OPTIONS}`,
      `CREATE TABLE IF NOT EXISTS digests (
         org_id VARCHAR(64) NOT NULL,
         week_start DATE NOT NULL,
         week_end DATE NOT NULL,
         ticket_count INT UNSIGNED NOT NULL,
         content MEDIUMTEXT NOT NULL,
         generated_at DATETIME(3) NOT NULL,
         PRIMARY KEY (org_id, week_start)
       ) ${TABLE_OPTIONS}`,
      `CREATE TABLE IF NOT EXISTS digest_leases (
         name VARCHAR(64) NOT NULL,
         holder VARCHAR(128) NOT NULL,
         expires_at DATETIME(3) NOT NULL,
         PRIMARY KEY (name)
       ) ${TABLE_OPTIONS}`,
      // One row per week whose automatic run was claimed; finished_at NULL = running (or crashed,
      // which a stale heartbeat_at reveals).
      `CREATE TABLE IF NOT EXISTS digest_runs (
         week_start DATE NOT NULL,
         holder VARCHAR(128) NOT NULL,
         started_at DATETIME(3) NOT NULL,
         heartbeat_at DATETIME(3) NOT NULL,
         finished_at DATETIME(3) NULL,
         attempts INT UNSIGNED NOT NULL DEFAULT 1,
         orgs_built INT UNSIGNED NOT NULL DEFAULT 0,
         PRIMARY KEY (week_start)
       ) ${TABLE_OPTIONS}`,
    ],
  },
  {
    version: 2,
    name: 'structured digest (topics with ids and counts) next to the Markdown',
    statements: [
      // JSON of DigestSummary; NULL for digests built before it existed. Next week's build reads
      // this week's topic counts back from it.
      'ALTER TABLE digests ADD COLUMN summary MEDIUMTEXT NULL',
    ],
  },
];

/** The digest schema, in the subset MySQL 8 and MariaDB 10.11 share (runMigrations). */
export const SCHEMA: MigrationSet = { table: 'digest_schema_migrations', migrations: MIGRATIONS };
