import { JsonlJournal } from '@support-agent/shared';
import type { ApiKeyRecord, KeyGrant, Org, OrgSettings, OrgWithSettings } from '../domain/model.js';
import type { GatewayStore } from '../domain/ports.js';
import { isScope, normalizeScopes, type Scope } from '../domain/scopes.js';
import type { SettingsPatch } from '../domain/settings.js';

/** One journal line; dates as ISO strings. */
type JournalRecord =
  | { t: 'org'; id: string; name: string; createdAt: string }
  | {
      t: 'settings';
      orgId: string;
      rateLimitPerKeyPerMin: number;
      rateLimitPerOrgPerMin: number;
      deflectionMonthlyLimit: number;
      highConfidenceThreshold: number;
      updatedAt: string;
    }
  | {
      t: 'key';
      id: string;
      orgId: string;
      name: string | null;
      keyHash: string;
      prefix: string;
      scopes: Scope[];
      createdAt: string;
    }
  | { t: 'revoke'; id: string; revokedAt: string };

/**
 * The embedded store (`npm start` without MYSQL_URL): state in memory, every change appended
 * and fsynced to a JSONL journal before it is acknowledged, replayed at start-up. One process
 * per journal file.
 */
export class EmbeddedGatewayStore implements GatewayStore {
  private readonly orgs = new Map<string, Org>();
  private readonly settings = new Map<string, OrgSettings>();
  private readonly keys = new Map<string, ApiKeyRecord>();
  private readonly keysByHash = new Map<string, ApiKeyRecord>();
  private readonly journal: JsonlJournal<JournalRecord>;

  constructor(path: string) {
    this.journal = new JsonlJournal<JournalRecord>(path);
    this.journal.replay((r) => this.apply(r));
  }

  private apply(r: JournalRecord): void {
    switch (r.t) {
      case 'org':
        this.orgs.set(r.id, { id: r.id, name: r.name, createdAt: new Date(r.createdAt) });
        break;
      case 'settings': {
        const { t: _t, orgId, updatedAt, ...values } = r;
        this.settings.set(orgId, { ...values, updatedAt: new Date(updatedAt) });
        break;
      }
      case 'key': {
        const { t: _t, createdAt, scopes, ...rest } = r;
        const key: ApiKeyRecord = {
          ...rest,
          scopes: normalizeScopes(scopes.filter(isScope)),
          createdAt: new Date(createdAt),
          revokedAt: null,
        };
        this.keys.set(key.id, key);
        this.keysByHash.set(key.keyHash, key);
        break;
      }
      case 'revoke': {
        const key = this.keys.get(r.id);
        if (key && key.revokedAt === null) key.revokedAt = new Date(r.revokedAt);
        break;
      }
    }
  }

  /** Journal first (durable), then memory. */
  private commit(records: JournalRecord[]): void {
    this.journal.appendMany(records);
    for (const r of records) this.apply(r);
  }

  async createOrg(org: Org, settings: OrgSettings): Promise<boolean> {
    if (this.orgs.has(org.id)) return false;
    this.commit([
      { t: 'org', id: org.id, name: org.name, createdAt: org.createdAt.toISOString() },
      settingsRecord(org.id, settings),
    ]);
    return true;
  }

  async getOrg(id: string): Promise<OrgWithSettings | undefined> {
    const org = this.orgs.get(id);
    return org ? this.withSettings(org) : undefined;
  }

  async listOrgs(): Promise<OrgWithSettings[]> {
    return [...this.orgs.values()]
      .sort((a, b) => a.createdAt.getTime() - b.createdAt.getTime() || compare(a.id, b.id))
      .map((o) => this.withSettings(o));
  }

  async countOrgs(): Promise<number> {
    return this.orgs.size;
  }

  async updateSettings(
    orgId: string,
    patch: SettingsPatch,
    at: Date,
  ): Promise<OrgSettings | undefined> {
    const current = this.settings.get(orgId);
    if (!current) return undefined;
    const next = { ...current, ...patch, updatedAt: at };
    this.commit([settingsRecord(orgId, next)]);
    return { ...next };
  }

  async insertApiKey(key: ApiKeyRecord): Promise<void> {
    if (this.keys.has(key.id) || this.keysByHash.has(key.keyHash)) {
      throw new Error('duplicate api key');
    }
    const { revokedAt: _r, createdAt, ...rest } = key;
    this.commit([{ t: 'key', ...rest, createdAt: createdAt.toISOString() }]);
  }

  async listApiKeys(orgId: string): Promise<ApiKeyRecord[]> {
    return [...this.keys.values()]
      .filter((k) => k.orgId === orgId)
      .sort((a, b) => a.createdAt.getTime() - b.createdAt.getTime() || compare(a.id, b.id))
      .map((k) => ({ ...k }));
  }

  async revokeApiKey(orgId: string, keyId: string, at: Date): Promise<ApiKeyRecord | undefined> {
    const key = this.keys.get(keyId);
    if (!key || key.orgId !== orgId) return undefined;
    if (key.revokedAt === null)
      this.commit([{ t: 'revoke', id: keyId, revokedAt: at.toISOString() }]);
    return { ...key };
  }

  async findKeyByHash(keyHash: string): Promise<KeyGrant | undefined> {
    const key = this.keysByHash.get(keyHash);
    const settings = key && this.settings.get(key.orgId);
    return key && settings ? { key: { ...key }, settings: { ...settings } } : undefined;
  }

  async ping(): Promise<void> {}

  async close(): Promise<void> {
    this.journal.close();
  }

  private withSettings(org: Org): OrgWithSettings {
    return { ...org, settings: { ...this.settings.get(org.id)! } };
  }
}

function settingsRecord(orgId: string, s: OrgSettings): JournalRecord {
  return {
    t: 'settings',
    orgId,
    rateLimitPerKeyPerMin: s.rateLimitPerKeyPerMin,
    rateLimitPerOrgPerMin: s.rateLimitPerOrgPerMin,
    deflectionMonthlyLimit: s.deflectionMonthlyLimit,
    highConfidenceThreshold: s.highConfidenceThreshold,
    updatedAt: s.updatedAt.toISOString(),
  };
}

function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
