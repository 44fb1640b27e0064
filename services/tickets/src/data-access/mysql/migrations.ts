import {
  TABLE_OPTIONS,
  unlessColumn,
  unlessIndex,
  type Migration,
  type MigrationSet,
} from '@support-agent/shared';

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
  {
    version: 3,
    name: 'ticket numbers per organization',
    // The id a client holds becomes the ticket's number in its organization (`number`); `id`
    // stays the table's key, never shown. Existing tickets keep what clients hold (number =
    // id); each organization's counter starts at its highest number, so its next ticket
    // continues above it. Every step is safe to repeat after an interrupted run. A tickets
    // replica of an earlier version cannot create tickets once `number` is NOT NULL (services/
    // tickets/README.md, "Upgrading to ticket numbers per organization").
    statements: [
      // One row per organization; a create locks its org's row and adds its batch's count.
      `CREATE TABLE IF NOT EXISTS tickets_org_counters (
         org_id VARCHAR(64) NOT NULL,
         last_number BIGINT UNSIGNED NOT NULL,
         PRIMARY KEY (org_id)
       ) ${TABLE_OPTIONS}`,
      unlessColumn(
        'tickets',
        'number',
        'ALTER TABLE tickets ADD COLUMN number BIGINT UNSIGNED NULL AFTER org_id',
      ),
      'UPDATE tickets SET number = id WHERE number IS NULL',
      // Lists order by (created_at, number) within an organization: the keyset indexes end in
      // the number instead of the key. (A row an earlier version inserted after the UPDATE
      // makes this fail on NOT NULL; the next start repeats the UPDATE and gets through.)
      unlessIndex(
        'tickets',
        'uq_tickets_number',
        `ALTER TABLE tickets
           MODIFY number BIGINT UNSIGNED NOT NULL,
           ADD UNIQUE KEY uq_tickets_number (org_id, number),
           DROP KEY ix_tickets_org_created,
           DROP KEY ix_tickets_org_status_created,
           DROP KEY ix_tickets_org_priority_created,
           DROP KEY ix_tickets_org_category_created,
           ADD KEY ix_tickets_list (org_id, created_at, number),
           ADD KEY ix_tickets_list_status (org_id, status, created_at, number),
           ADD KEY ix_tickets_list_priority (org_id, priority, created_at, number),
           ADD KEY ix_tickets_list_category (org_id, category, created_at, number)`,
      ),
      `INSERT INTO tickets_org_counters (org_id, last_number)
         SELECT m.org_id, m.top FROM (
           SELECT org_id, MAX(number) AS top FROM tickets GROUP BY org_id
         ) AS m
       ON DUPLICATE KEY UPDATE last_number = GREATEST(last_number, m.top)`,
    ],
  },
];

/** The tickets schema, in the subset MySQL 8 and MariaDB 10.11 share (runMigrations). */
export const SCHEMA: MigrationSet = { table: 'tickets_schema_migrations', migrations: MIGRATIONS };
