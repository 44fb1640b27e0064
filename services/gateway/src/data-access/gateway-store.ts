import type { ApiKeyRecord, KeyGrant, Org, OrgSettings, OrgWithSettings } from '../domain/model.js';
import type { SettingsPatch } from '../domain/settings.js';

/**
 * Organizations, their settings and API keys. Implemented over MySQL (production) and over
 * a JSONL journal (embedded mode); both behave the same.
 */
export interface GatewayStore {
  /** Creates the organization with its settings; false when the id is taken. */
  createOrg(org: Org, settings: OrgSettings): Promise<boolean>;
  getOrg(id: string): Promise<OrgWithSettings | undefined>;
  /** Oldest first. */
  listOrgs(): Promise<OrgWithSettings[]>;
  countOrgs(): Promise<number>;
  /** undefined when the organization does not exist. */
  updateSettings(orgId: string, patch: SettingsPatch, at: Date): Promise<OrgSettings | undefined>;
  insertApiKey(key: ApiKeyRecord): Promise<void>;
  /** Oldest first, revoked ones included. */
  listApiKeys(orgId: string): Promise<ApiKeyRecord[]>;
  /** Sets revoked_at once (a repeat keeps the first time); undefined when no such key in the org. */
  revokeApiKey(orgId: string, keyId: string, at: Date): Promise<ApiKeyRecord | undefined>;
  /** The key with this hash (revoked or not) and its organization's settings. */
  findKeyByHash(keyHash: string): Promise<KeyGrant | undefined>;
  /** Throws when the store is unreachable. */
  ping(): Promise<void>;
  close(): Promise<void>;
}
