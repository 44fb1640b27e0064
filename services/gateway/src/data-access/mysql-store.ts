import {
  AppError,
  isDuplicateKeyError,
  mysqlUnavailable,
  openMysql,
  withTimeout,
  withTransaction,
  type Logger,
  type Pool,
} from '@support-agent/shared';
import type { RowDataPacket } from 'mysql2/promise';
import type { ApiKeyRecord, KeyGrant, Org, OrgSettings, OrgWithSettings } from '../domain/model.js';
import type { GatewayStore } from '../domain/ports.js';
import { isScope, normalizeScopes } from '../domain/scopes.js';
import type { SettingsPatch } from '../domain/settings.js';
import { SCHEMA } from './migrations.js';

const SETTINGS_COLUMNS: Record<keyof SettingsPatch, string> = {
  rateLimitPerKeyPerMin: 'rate_limit_per_key_per_min',
  rateLimitPerOrgPerMin: 'rate_limit_per_org_per_min',
  deflectionMonthlyLimit: 'deflection_monthly_limit',
  highConfidenceThreshold: 'high_confidence_threshold',
};

const ORG_SELECT = `
  SELECT o.id, o.name, o.created_at, s.rate_limit_per_key_per_min, s.rate_limit_per_org_per_min,
         s.deflection_monthly_limit, s.high_confidence_threshold, s.updated_at
    FROM gateway_orgs o JOIN gateway_org_settings s ON s.org_id = o.id`;

/**
 * Longest a store call may take. Every request looks its key up here (after the cache), so a
 * database that hangs (stopped, overloaded, a network partition) must fail the request with a
 * 503 in bounded time rather than hold it; the query itself is left to finish or fail.
 */
const STORE_TIMEOUT_MS = 2_000;
const LATE = `no answer from MySQL within ${STORE_TIMEOUT_MS} ms`;

class StoreTimeout extends Error {
  readonly code = 'STORE_TIMEOUT';
}

/** An unreachable or hanging database is service_unavailable (503 + Retry-After), not a bug. */
function toStoreError(err: unknown): unknown {
  if (err instanceof StoreTimeout) {
    return new AppError('service_unavailable', 'the gateway database is unavailable', {
      retryAfter: 1,
      cause: err,
    });
  }
  return mysqlUnavailable(err, 'the gateway database');
}

/** Runs a store call within STORE_TIMEOUT_MS, mapping database outages to service_unavailable. */
async function bounded<T>(call: () => Promise<T>): Promise<T> {
  try {
    return await withTimeout(call(), STORE_TIMEOUT_MS, () => new StoreTimeout(LATE));
  } catch (err) {
    throw toStoreError(err);
  }
}

const KEY_COLUMNS =
  'k.id, k.org_id, k.name, k.key_hash, k.prefix, k.scopes, k.created_at, k.revoked_at';

/** The production store: MySQL tables owned by the gateway (see migrations.ts). */
export class MysqlGatewayStore implements GatewayStore {
  private constructor(private readonly pool: Pool) {}

  /** Connects (waiting for the server), applies migrations and returns the store. */
  static async open(url: string, logger: Logger): Promise<MysqlGatewayStore> {
    return new MysqlGatewayStore(await openMysql(url, logger, { schema: SCHEMA }));
  }

  async createOrg(org: Org, settings: OrgSettings): Promise<boolean> {
    return bounded(() =>
      withTransaction(this.pool, async (conn) => {
        try {
          await conn.query('INSERT INTO gateway_orgs (id, name, created_at) VALUES (?, ?, ?)', [
            org.id,
            org.name,
            org.createdAt,
          ]);
        } catch (err) {
          if (isDuplicateKeyError(err)) return false;
          throw err;
        }
        await conn.query(
          `INSERT INTO gateway_org_settings (org_id, rate_limit_per_key_per_min, rate_limit_per_org_per_min,
             deflection_monthly_limit, high_confidence_threshold, updated_at) VALUES (?, ?, ?, ?, ?, ?)`,
          [
            org.id,
            settings.rateLimitPerKeyPerMin,
            settings.rateLimitPerOrgPerMin,
            settings.deflectionMonthlyLimit,
            settings.highConfidenceThreshold,
            settings.updatedAt,
          ],
        );
        return true;
      }),
    );
  }

  async getOrg(id: string): Promise<OrgWithSettings | undefined> {
    return bounded(async () => {
      const [rows] = await this.pool.query<RowDataPacket[]>(`${ORG_SELECT} WHERE o.id = ?`, [id]);
      return rows[0] ? toOrg(rows[0]) : undefined;
    });
  }

  async listOrgs(): Promise<OrgWithSettings[]> {
    return bounded(async () => {
      const [rows] = await this.pool.query<RowDataPacket[]>(
        `${ORG_SELECT} ORDER BY o.created_at, o.id`,
      );
      return rows.map(toOrg);
    });
  }

  async countOrgs(): Promise<number> {
    return bounded(async () => {
      const [rows] = await this.pool.query<RowDataPacket[]>(
        'SELECT COUNT(*) AS n FROM gateway_orgs',
      );
      return Number(rows[0]?.n ?? 0);
    });
  }

  async updateSettings(
    orgId: string,
    patch: SettingsPatch,
    at: Date,
  ): Promise<OrgSettings | undefined> {
    return bounded(async () => {
      const entries = Object.entries(patch) as Array<[keyof SettingsPatch, number]>;
      const sets = [...entries.map(([k]) => `${SETTINGS_COLUMNS[k]} = ?`), 'updated_at = ?'];
      const [result] = await this.pool.query(
        `UPDATE gateway_org_settings SET ${sets.join(', ')} WHERE org_id = ?`,
        [...entries.map(([, v]) => v), at, orgId],
      );
      if ((result as { affectedRows: number }).affectedRows === 0) return undefined;
      return (await this.getOrg(orgId))?.settings;
    });
  }

  async insertApiKey(key: ApiKeyRecord): Promise<void> {
    return bounded(async () => {
      await this.pool.query(
        `INSERT INTO gateway_api_keys (id, org_id, name, key_hash, prefix, scopes, created_at, revoked_at)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
        [
          key.id,
          key.orgId,
          key.name,
          key.keyHash,
          key.prefix,
          JSON.stringify(key.scopes),
          key.createdAt,
          key.revokedAt,
        ],
      );
    });
  }

  async listApiKeys(orgId: string): Promise<ApiKeyRecord[]> {
    return bounded(async () => {
      const [rows] = await this.pool.query<RowDataPacket[]>(
        `SELECT ${KEY_COLUMNS} FROM gateway_api_keys k WHERE k.org_id = ? ORDER BY k.created_at, k.id`,
        [orgId],
      );
      return rows.map(toKey);
    });
  }

  async revokeApiKey(orgId: string, keyId: string, at: Date): Promise<ApiKeyRecord | undefined> {
    return bounded(async () => {
      await this.pool.query(
        'UPDATE gateway_api_keys SET revoked_at = ? WHERE id = ? AND org_id = ? AND revoked_at IS NULL',
        [at, keyId, orgId],
      );
      const [rows] = await this.pool.query<RowDataPacket[]>(
        `SELECT ${KEY_COLUMNS} FROM gateway_api_keys k WHERE k.id = ? AND k.org_id = ?`,
        [keyId, orgId],
      );
      return rows[0] ? toKey(rows[0]) : undefined;
    });
  }

  async findKeyByHash(keyHash: string): Promise<KeyGrant | undefined> {
    return bounded(async () => {
      const [rows] = await this.pool.query<RowDataPacket[]>(
        `SELECT ${KEY_COLUMNS}, s.rate_limit_per_key_per_min, s.rate_limit_per_org_per_min,
                s.deflection_monthly_limit, s.high_confidence_threshold, s.updated_at
           FROM gateway_api_keys k JOIN gateway_org_settings s ON s.org_id = k.org_id
          WHERE k.key_hash = ?`,
        [keyHash],
      );
      const row = rows[0];
      return row ? { key: toKey(row), settings: toSettings(row) } : undefined;
    });
  }

  async ping(): Promise<void> {
    return bounded(async () => {
      await this.pool.query('SELECT 1');
    });
  }

  async close(): Promise<void> {
    await this.pool.end();
  }
}

/** A settings row: each SETTINGS_COLUMNS column as a number, and when it last changed. */
function toSettings(row: RowDataPacket): OrgSettings {
  const columns = Object.entries(SETTINGS_COLUMNS);
  const values = Object.fromEntries(columns.map(([field, col]) => [field, Number(row[col])]));
  return { ...(values as Required<SettingsPatch>), updatedAt: row.updated_at as Date };
}

function toOrg(row: RowDataPacket): OrgWithSettings {
  return {
    id: row.id as string,
    name: row.name as string,
    createdAt: row.created_at as Date,
    settings: toSettings(row),
  };
}

function toKey(row: RowDataPacket): ApiKeyRecord {
  const parsed: unknown = JSON.parse(row.scopes as string);
  const scopes = Array.isArray(parsed) ? normalizeScopes(parsed.filter(isScope)) : [];
  return {
    id: row.id as string,
    orgId: row.org_id as string,
    name: (row.name as string | null) ?? null,
    keyHash: row.key_hash as string,
    prefix: row.prefix as string,
    scopes,
    createdAt: row.created_at as Date,
    revokedAt: (row.revoked_at as Date | null) ?? null,
  };
}
