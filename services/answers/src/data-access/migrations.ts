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
  {
    version: 2,
    name: "each organization's own triage",
    statements: [
      // One row per organization that touched its triage: categories (JSON array), the active
      // version (0 = built-in) and the one before it (a rollback's target), the automatic
      // retraining rule and the corrections counted since the last run. Locked (FOR UPDATE) by
      // every job creation and activation of the organization.
      `CREATE TABLE IF NOT EXISTS answers_triage_settings (
         org_id VARCHAR(64) NOT NULL,
         categories TEXT NOT NULL,
         active_version INT UNSIGNED NOT NULL DEFAULT 0,
         previous_version INT UNSIGNED NOT NULL DEFAULT 0,
         auto_after_corrections INT UNSIGNED NULL,
         auto_activate TINYINT(1) NOT NULL DEFAULT 0,
         corrections_since_run INT UNSIGNED NOT NULL DEFAULT 0,
         updated_at DATETIME(3) NOT NULL,
         PRIMARY KEY (org_id)
       ) ${TABLE_OPTIONS}`,
      // The training set: uploaded examples and people's corrections, one row per key.
      `CREATE TABLE IF NOT EXISTS answers_triage_examples (
         org_id VARCHAR(64) NOT NULL,
         example_key VARCHAR(120) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
         text MEDIUMTEXT NOT NULL,
         label VARCHAR(32) NOT NULL,
         source VARCHAR(16) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
         updated_at DATETIME(3) NOT NULL,
         PRIMARY KEY (org_id, example_key)
       ) ${TABLE_OPTIONS}`,
      // Rows of uploads not yet committed (all of an upload joins the training set at once).
      `CREATE TABLE IF NOT EXISTS answers_triage_staged (
         upload_id VARCHAR(64) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
         seq INT UNSIGNED NOT NULL,
         org_id VARCHAR(64) NOT NULL,
         line INT UNSIGNED NOT NULL,
         example_key VARCHAR(120) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
         text MEDIUMTEXT NOT NULL,
         label VARCHAR(32) NOT NULL,
         staged_at DATETIME(3) NOT NULL,
         PRIMARY KEY (upload_id, seq),
         KEY ix_answers_triage_staged_at (staged_at)
       ) ${TABLE_OPTIONS}`,
      // Correction events already counted (a redelivered tickets.category_changed counts once).
      `CREATE TABLE IF NOT EXISTS answers_triage_correction_events (
         event_id VARCHAR(64) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
         org_id VARCHAR(64) NOT NULL,
         created_at DATETIME(3) NOT NULL,
         PRIMARY KEY (event_id)
       ) ${TABLE_OPTIONS}`,
      `CREATE TABLE IF NOT EXISTS answers_triage_jobs (
         id VARCHAR(40) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
         org_id VARCHAR(64) NOT NULL,
         state VARCHAR(16) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
         trigger_kind VARCHAR(16) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
         activate TINYINT(1) NOT NULL,
         phase VARCHAR(100) NOT NULL,
         progress DOUBLE NOT NULL,
         attempts INT UNSIGNED NOT NULL DEFAULT 0,
         lease_owner VARCHAR(100) NULL,
         lease_expires_at DATETIME(3) NULL,
         created_at DATETIME(3) NOT NULL,
         started_at DATETIME(3) NULL,
         finished_at DATETIME(3) NULL,
         error TEXT NULL,
         version INT UNSIGNED NULL,
         report TEXT NULL,
         activated TINYINT(1) NOT NULL DEFAULT 0,
         PRIMARY KEY (id),
         KEY ix_answers_triage_jobs_org (org_id, created_at),
         KEY ix_answers_triage_jobs_state (state, created_at)
       ) ${TABLE_OPTIONS}`,
      // Every trained version (the model file is JSON, at most a few MB).
      `CREATE TABLE IF NOT EXISTS answers_triage_models (
         org_id VARCHAR(64) NOT NULL,
         version INT UNSIGNED NOT NULL,
         job_id VARCHAR(40) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
         categories TEXT NOT NULL,
         report TEXT NOT NULL,
         model LONGTEXT NOT NULL,
         created_at DATETIME(3) NOT NULL,
         PRIMARY KEY (org_id, version)
       ) ${TABLE_OPTIONS}`,
    ],
  },
];

/** The answers schema, in the subset MySQL 8 and MariaDB 10.11 share (runMigrations). */
export const SCHEMA: MigrationSet = { table: 'answers_schema_migrations', migrations: MIGRATIONS };
