import { chmodSync, mkdirSync, readdirSync } from 'node:fs';
import { join } from 'node:path';

/** Owner-only modes of embedded mode's files: every tenant's data and the signing secrets. */
export const PRIVATE_DIR_MODE = 0o700;
export const PRIVATE_FILE_MODE = 0o600;

const gone = (err: unknown): boolean => (err as NodeJS.ErrnoException).code === 'ENOENT';

/**
 * Makes `dir` (DATA_DIR) private to the user running the services: created 0700 when missing,
 * and everything already under it tightened, folders to 0700 and files to 0600 (a DATA_DIR
 * written by an older version, or copied in, was world-readable). Symbolic links are neither
 * followed nor changed. Entries removed meanwhile (another service renaming its files) are
 * skipped. Files created later get owner-only modes from the umask (privateUmask).
 */
export function securePrivateDir(dir: string): void {
  mkdirSync(dir, { recursive: true, mode: PRIVATE_DIR_MODE });
  chmodSync(dir, PRIVATE_DIR_MODE);
  tightenUnder(dir);
}

function tightenUnder(dir: string): void {
  let entries;
  try {
    entries = readdirSync(dir, { withFileTypes: true });
  } catch (err) {
    if (gone(err)) return;
    throw err;
  }
  for (const entry of entries) {
    const path = join(dir, entry.name);
    try {
      if (entry.isDirectory()) {
        chmodSync(path, PRIVATE_DIR_MODE);
        tightenUnder(path);
      } else if (entry.isFile()) {
        chmodSync(path, PRIVATE_FILE_MODE);
      }
    } catch (err) {
      if (!gone(err)) throw err;
    }
  }
}

/**
 * Owner-only modes for every file and folder this process creates from now on (umask 077):
 * 0600 files, 0700 folders, whatever mode the code that writes them asks for.
 */
export function privateUmask(): void {
  process.umask(0o077);
}
