import { randomBytes } from 'node:crypto';
import { chmodSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';

export function adminTokenPath(dataDir: string): string {
  return path.join(dataDir, 'admin-token');
}

/** The token stored under DATA_DIR, or undefined when there is none. */
export function readAdminTokenFile(dataDir: string): string | undefined {
  try {
    const token = readFileSync(adminTokenPath(dataDir), 'utf8').trim();
    return token.length > 0 ? token : undefined;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw err;
  }
}

/**
 * Embedded mode's admin token: read from DATA_DIR/admin-token, or generated and written there
 * (mode 0600) on first start. `generated` tells the caller to print it.
 */
export function ensureAdminTokenFile(dataDir: string): {
  token: string;
  generated: boolean;
  path: string;
} {
  const file = adminTokenPath(dataDir);
  const existing = readAdminTokenFile(dataDir);
  if (existing) return { token: existing, generated: false, path: file };
  mkdirSync(dataDir, { recursive: true });
  const token = `sa_admin_${randomBytes(32).toString('base64url')}`;
  writeFileSync(file, `${token}\n`, { mode: 0o600 });
  chmodSync(file, 0o600); // an existing empty file keeps its old mode otherwise
  return { token, generated: true, path: file };
}
