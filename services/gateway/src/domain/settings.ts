import { invalidRequest } from '@support-agent/shared';
import type { OrgSettings } from './model.js';

export const DEFAULT_SETTINGS = {
  rateLimitPerKeyPerMin: 600,
  rateLimitPerOrgPerMin: 3000,
  deflectionMonthlyLimit: 1000,
  highConfidenceThreshold: 85,
} as const;

export type SettingsPatch = Partial<Omit<OrgSettings, 'updatedAt'>>;

export function defaultSettings(at: Date): OrgSettings {
  return { ...DEFAULT_SETTINGS, updatedAt: at };
}

/** Wire name, model name and allowed range of each setting. */
const FIELDS = [
  { wire: 'rate_limit_per_key_per_min', model: 'rateLimitPerKeyPerMin', min: 1, max: 1_000_000 },
  { wire: 'rate_limit_per_org_per_min', model: 'rateLimitPerOrgPerMin', min: 1, max: 10_000_000 },
  // int32 on the wire to the answers service.
  { wire: 'deflection_monthly_limit', model: 'deflectionMonthlyLimit', min: 1, max: 2_147_483_647 },
  { wire: 'high_confidence_threshold', model: 'highConfidenceThreshold', min: 0, max: 100 },
] as const;

/** Validates a PATCH body (snake_case, any subset, unknown fields ignored). */
export function parseSettingsPatch(body: Record<string, unknown>): SettingsPatch {
  const patch: SettingsPatch = {};
  for (const f of FIELDS) {
    const value = body[f.wire];
    if (value === undefined || value === null) continue;
    if (typeof value !== 'number' || !Number.isInteger(value) || value < f.min || value > f.max) {
      throw invalidRequest(`${f.wire} must be an integer between ${f.min} and ${f.max}`, f.wire);
    }
    patch[f.model] = value;
  }
  if (Object.keys(patch).length === 0) {
    throw invalidRequest(`give at least one of ${FIELDS.map((f) => f.wire).join(', ')}`);
  }
  return patch;
}

export function settingsToJson(s: OrgSettings): Record<string, unknown> {
  return {
    rate_limit_per_key_per_min: s.rateLimitPerKeyPerMin,
    rate_limit_per_org_per_min: s.rateLimitPerOrgPerMin,
    deflection_monthly_limit: s.deflectionMonthlyLimit,
    high_confidence_threshold: s.highConfidenceThreshold,
    updated_at: s.updatedAt.toISOString(),
  };
}
