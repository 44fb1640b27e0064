import { AppError, invalidRequest } from '@support-agent/shared';
import { displayPrefix, generateApiKey, hashApiKey, randomId } from './api-keys.js';
import type { ApiKeyRecord, OrgSettings, OrgWithSettings } from './model.js';
import type { GatewayStore } from './ports.js';
import { isScope, normalizeScopes, SCOPES, type Scope } from './scopes.js';
import { defaultSettings, type SettingsPatch } from './settings.js';

/**
 * Organization and key ids are printable ASCII (slugs, `org_…`, `key_…`; ASCII columns in
 * MySQL). Anything else names nothing: answered not_found without a query (comparing it with
 * an ASCII column was a MySQL collation error, i.e. a 500).
 */
function couldBeStoredId(id: string): boolean {
  return /^[\x21-\x7e]{1,64}$/.test(id);
}

export const ORG_SLUG_PATTERN = /^[a-z0-9][a-z0-9-]{1,62}$/;
const NAME_MAX = 200;

export interface CreatedKey {
  record: ApiKeyRecord;
  /** The plain key: returned once, never stored. */
  key: string;
}

/** Told about every stored settings change (the answers service keeps a copy of the policy). */
export type SettingsListener = (orgId: string, settings: OrgSettings) => Promise<void>;

/** Organization management: the use cases behind the admin API. */
export class OrgAdmin {
  constructor(
    private readonly store: GatewayStore,
    private readonly onSettings: SettingsListener = async () => {},
    private readonly now: () => Date = () => new Date(),
  ) {}

  async createOrg(input: { name: unknown; id?: unknown }): Promise<OrgWithSettings> {
    const name = parseName(input.name, 'name', true)!;
    let id: string;
    if (input.id === undefined || input.id === null) {
      id = randomId('org', 16);
    } else if (typeof input.id !== 'string' || !ORG_SLUG_PATTERN.test(input.id)) {
      throw invalidRequest(
        'id must be 2-63 characters of lower-case letters, digits and hyphens, starting with a letter or digit',
        'id',
      );
    } else {
      id = input.id;
    }
    const at = this.now();
    const org = { id, name, createdAt: at };
    const settings = defaultSettings(at);
    if (!(await this.store.createOrg(org, settings))) {
      throw new AppError('conflict', `organization ${id} already exists`, { param: 'id' });
    }
    await this.onSettings(id, settings);
    return { ...org, settings };
  }

  listOrgs(): Promise<OrgWithSettings[]> {
    return this.store.listOrgs();
  }

  /** The organization, or not_found. */
  async requireOrg(orgId: string): Promise<OrgWithSettings> {
    const org = couldBeStoredId(orgId) ? await this.store.getOrg(orgId) : undefined;
    if (!org) throw new AppError('not_found', `organization ${orgId} not found`);
    return org;
  }

  async updateSettings(orgId: string, patch: SettingsPatch): Promise<OrgSettings> {
    const settings = couldBeStoredId(orgId)
      ? await this.store.updateSettings(orgId, patch, this.now())
      : undefined;
    if (!settings) throw new AppError('not_found', `organization ${orgId} not found`);
    await this.onSettings(orgId, settings);
    return settings;
  }

  async createKey(orgId: string, input: { name?: unknown; scopes: unknown }): Promise<CreatedKey> {
    await this.requireOrg(orgId);
    const name = parseName(input.name, 'name', false) ?? null;
    const scopes = parseScopes(input.scopes);
    return this.issueKey(orgId, name, scopes);
  }

  async listKeys(orgId: string): Promise<ApiKeyRecord[]> {
    await this.requireOrg(orgId);
    return this.store.listApiKeys(orgId);
  }

  /** Idempotent: revoking a revoked key succeeds and keeps the first revocation time. */
  async revokeKey(orgId: string, keyId: string): Promise<ApiKeyRecord> {
    await this.requireOrg(orgId);
    const key = couldBeStoredId(keyId)
      ? await this.store.revokeApiKey(orgId, keyId, this.now())
      : undefined;
    if (!key) throw new AppError('not_found', `key ${keyId} not found in organization ${orgId}`);
    return key;
  }

  async issueKey(orgId: string, name: string | null, scopes: Scope[]): Promise<CreatedKey> {
    const key = generateApiKey();
    const record: ApiKeyRecord = {
      id: randomId('key', 20),
      orgId,
      name,
      keyHash: hashApiKey(key),
      prefix: displayPrefix(key),
      scopes: normalizeScopes(scopes),
      createdAt: this.now(),
      revokedAt: null,
    };
    await this.store.insertApiKey(record);
    return { record, key };
  }
}

export interface DemoBootstrap {
  orgId: string;
  keyId: string;
  key: string;
}

/**
 * First start of an embedded installation: when no organization exists yet, creates the
 * organization `demo` with a key holding every scope and returns that key (to print once).
 * Returns undefined on any later start.
 */
export async function bootstrapDemo(store: GatewayStore): Promise<DemoBootstrap | undefined> {
  if ((await store.countOrgs()) > 0) return undefined;
  const admin = new OrgAdmin(store);
  try {
    await admin.createOrg({ id: 'demo', name: 'Demo organization' });
  } catch (err) {
    if (err instanceof AppError && err.code === 'conflict') return undefined;
    throw err;
  }
  const { record, key } = await admin.issueKey('demo', 'demo key', [...SCOPES]);
  return { orgId: 'demo', keyId: record.id, key };
}

function parseName(value: unknown, param: string, required: boolean): string | undefined {
  if (value === undefined || value === null || (typeof value === 'string' && value.trim() === '')) {
    if (required) throw invalidRequest(`${param} is required`, param);
    return undefined;
  }
  if (typeof value !== 'string') throw invalidRequest(`${param} must be a string`, param);
  const trimmed = value.trim();
  if ([...trimmed].length > NAME_MAX) {
    throw invalidRequest(`${param} must be at most ${NAME_MAX} characters`, param);
  }
  return trimmed;
}

function parseScopes(value: unknown): Scope[] {
  const message = `scopes must be a non-empty array of: ${SCOPES.join(', ')}`;
  if (!Array.isArray(value) || value.length === 0) throw invalidRequest(message, 'scopes');
  for (const s of value) {
    if (!isScope(s))
      throw invalidRequest(`unknown scope ${JSON.stringify(s)}; ${message}`, 'scopes');
  }
  return normalizeScopes(value as Scope[]);
}
