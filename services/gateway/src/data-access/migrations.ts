import { TABLE_OPTIONS, type Migration, type MigrationSet } from '@support-agent/shared';

// Ids and hashes are ASCII with binary collation: generated ids are case-sensitive tokens and
// must not collide under the server's case-insensitive default collation.
const MIGRATIONS: Migration[] = [
  {
    version: 1,
    name: 'orgs, settings and api keys',
    statements: [
      `CREATE TABLE IF NOT EXISTS gateway_orgs (
         id VARCHAR(64) CHARACTER SET ascii COLLATE ascii_bin NOT NULL PRIMARY KEY,
         name VARCHAR(200) NOT NULL,
         created_at DATETIME(3) NOT NULL
       ) ${TABLE_OPTIONS}`,
      `CREATE TABLE IF NOT EXISTS gateway_org_settings (
         org_id VARCHAR(64) CHARACTER SET ascii COLLATE ascii_bin NOT NULL PRIMARY KEY,
         rate_limit_per_key_per_min INT NOT NULL DEFAULT 600,
         rate_limit_per_org_per_min INT NOT NULL DEFAULT 3000,
         deflection_monthly_limit INT NOT NULL DEFAULT 1000,
         high_confidence_threshold INT NOT NULL DEFAULT 75,
         updated_at DATETIME(3) NOT NULL,
         CONSTRAINT fk_gateway_settings_org FOREIGN KEY (org_id) REFERENCES gateway_orgs (id)
       ) ${TABLE_OPTIONS}`,
      `CREATE TABLE IF NOT EXISTS gateway_api_keys (
         id VARCHAR(40) CHARACTER SET ascii COLLATE ascii_bin NOT NULL PRIMARY KEY,
         org_id VARCHAR(64) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
         name VARCHAR(200) NULL,
         key_hash CHAR(64) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
         prefix VARCHAR(16) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
         scopes TEXT NOT NULL,
         created_at DATETIME(3) NOT NULL,
         revoked_at DATETIME(3) NULL,
         UNIQUE KEY uq_gateway_api_keys_hash (key_hash),
         KEY ix_gateway_api_keys_org (org_id, created_at),
         CONSTRAINT fk_gateway_keys_org FOREIGN KEY (org_id) REFERENCES gateway_orgs (id)
       ) ${TABLE_OPTIONS}`,
    ],
  },
];

/** The gateway schema, in the subset MySQL 8 and MariaDB 10.11 share (runMigrations). */
export const SCHEMA: MigrationSet = { table: 'gateway_schema_migrations', migrations: MIGRATIONS };
