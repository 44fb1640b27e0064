import { TABLE_OPTIONS, type Migration, type MigrationSet } from '@support-agent/shared';

const MIGRATIONS: Migration[] = [
  {
    version: 1,
    name: 'tickets, outbox, triage log, secrets',
    statements: [
      // Every list query is `org_id [= filter] ORDER BY created_at DESC, id DESC`
      // from a keyset position, so each filter has an index ending in (created_at, id):
      // a page costs the same at a million rows as at a thousand.
      // Idempotency keys are case-sensitive, hence the binary collation.
      `CREATE TABLE IF NOT EXISTS tickets (
         id BIGINT UNSIGNED NOT NULL AUTO_INCREMENT,
         org_id VARCHAR(64) NOT NULL,
         content TEXT NOT NULL,
         author_name VARCHAR(200) NULL,
         idempotency_key VARCHAR(200) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NULL,
         status VARCHAR(20) NOT NULL,
         priority VARCHAR(20) NOT NULL,
         category VARCHAR(32) NULL,
         ai_summary TEXT NULL,
         ai_answer MEDIUMTEXT NULL,
         created_at DATETIME(3) NOT NULL,
         updated_at DATETIME(3) NOT NULL,
         PRIMARY KEY (id),
         UNIQUE KEY uq_tickets_idempotency (org_id, idempotency_key),
         KEY ix_tickets_org_created (org_id, created_at, id),
         KEY ix_tickets_org_status_created (org_id, status, created_at, id),
         KEY ix_tickets_org_priority_created (org_id, priority, created_at, id),
         KEY ix_tickets_org_category_created (org_id, category, created_at, id)
       ) ${TABLE_OPTIONS}`,
      // payload is the serialized envelope, published byte for byte (not JSON: MySQL 8
      // would normalise it). (published_at, id) serves both the relay and the purge.
      `CREATE TABLE IF NOT EXISTS tickets_outbox (
         id BIGINT UNSIGNED NOT NULL AUTO_INCREMENT,
         event_id CHAR(36) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
         subject VARCHAR(100) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
         payload MEDIUMTEXT NOT NULL,
         created_at DATETIME(3) NOT NULL,
         published_at DATETIME(3) NULL,
         PRIMARY KEY (id),
         UNIQUE KEY uq_tickets_outbox_event (event_id),
         KEY ix_tickets_outbox_pending (published_at, id)
       ) ${TABLE_OPTIONS}`,
      `CREATE TABLE IF NOT EXISTS tickets_triage_applied (
         event_id VARCHAR(64) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NOT NULL,
         ticket_id BIGINT UNSIGNED NOT NULL,
         applied_at DATETIME(3) NOT NULL,
         PRIMARY KEY (event_id)
       ) ${TABLE_OPTIONS}`,
      `CREATE TABLE IF NOT EXISTS tickets_secrets (
         name VARCHAR(64) NOT NULL,
         secret VARBINARY(64) NOT NULL,
         created_at DATETIME(3) NOT NULL,
         PRIMARY KEY (name)
       ) ${TABLE_OPTIONS}`,
    ],
  },
  {
    version: 2,
    name: 'outbox trace context',
    statements: [
      // The W3C traceparent of the request that recorded the event, sent as a message header.
      `ALTER TABLE tickets_outbox
         ADD COLUMN traceparent VARCHAR(64) CHARACTER SET ascii COLLATE ascii_bin NULL`,
    ],
  },
];

/** The tickets schema, in the subset MySQL 8 and MariaDB 10.11 share (runMigrations). */
export const SCHEMA: MigrationSet = { table: 'tickets_schema_migrations', migrations: MIGRATIONS };
