import type { Scope } from './scopes.js';

export interface Org {
  id: string;
  name: string;
  createdAt: Date;
}

/** Per-organization policy; rate limits are enforced here, the rest is passed to answers. */
export interface OrgSettings {
  rateLimitPerKeyPerMin: number;
  rateLimitPerOrgPerMin: number;
  deflectionMonthlyLimit: number;
  highConfidenceThreshold: number;
  updatedAt: Date;
}

export interface OrgWithSettings extends Org {
  settings: OrgSettings;
}

export interface ApiKeyRecord {
  id: string;
  orgId: string;
  name: string | null;
  /** SHA-256 hex of the plain key. */
  keyHash: string;
  /** First characters of the plain key, for display. */
  prefix: string;
  scopes: Scope[];
  createdAt: Date;
  revokedAt: Date | null;
}

/** What authentication needs about a key: the key itself and its organization's settings. */
export interface KeyGrant {
  key: ApiKeyRecord;
  settings: OrgSettings;
}
