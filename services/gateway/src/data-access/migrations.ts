import type { Migration } from '@support-agent/shared';

export const MIGRATIONS_TABLE = 'gateway_schema_migrations';

// Ids and hashes are ASCII with binary collation: generated ids are case-sensitive tokens and
// must not collide under the server's case-insensitive default collation.
export const MIGRATIONS: Migration[] = [
  {
    version: 1,
    name: 'orgs, settings and api keys',
    statements: [
      `CREATE TABLE IF NOT EXISTS gateway_orgs (
         id VARCHAR(64) CHARACTER SET ascii COLLATE ascii_bin NOT NULL PRIMARY KEY,
         name VARCHAR(200) NOT NULL,
         created_at DATETIME(3) NOT NULL
       ) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci`,
      `CREATE TABLE IF NOT EXISTS gateway_org_settings (
         org_id VARCHAR(64) CHARACTER SET ascii COLLATE ascii_bin NOT NULL PRIMARY KEY,
         rate_limit_per_key_per_min INT NOT NULL DEFAULT 600,
         rate_limit_per_org_per_min INT NOT NULL DEFAULT 3000,
         deflection_monthly_limit INT NOT NULL DEFAULT 1000,
         high_confidence_threshold INT NOT NULL DEFAULT 75,
         updated_at DATETIME(3) NOT NULL,
         CONSTRAINT fk_gateway_settings_org FOREIGN KEY (org_id) REFERENCES gateway_orgs (id)
       ) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci`,
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
       ) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci`,
    ],
  },
];
