import { closeSync, fsyncSync, openSync, renameSync, rmSync, writeSync } from 'node:fs';
import { dirname } from 'node:path';

/**
 * Replaces `path` by `content` atomically: a temporary file beside it is written and fsynced,
 * then renamed over it, so a crash leaves the old content or the new, never a mix. With
 * `syncDirectory` the directory is fsynced too, so the rename itself survives a power loss.
 */
export function writeFileAtomic(
  path: string,
  content: string | Buffer,
  options: { tmp?: string; syncDirectory?: boolean } = {},
): void {
  const tmp = options.tmp ?? `${path}.tmp`;
  rmSync(tmp, { force: true });
  const fd = openSync(tmp, 'w');
  try {
    writeFully(fd, typeof content === 'string' ? Buffer.from(content) : content);
    fsyncSync(fd);
  } catch (err) {
    // A full disk: the old content stays, and so does the space the attempt took.
    closeSync(fd);
    rmSync(tmp, { force: true });
    throw err;
  }
  closeSync(fd);
  renameSync(tmp, path);
  if (options.syncDirectory) {
    const dirFd = openSync(dirname(path), 'r');
    try {
      fsyncSync(dirFd);
    } finally {
      closeSync(dirFd);
    }
  }
}

/** Writes all of `bytes` at the file's position (writeSync may write less than asked). */
export function writeFully(fd: number, bytes: Buffer): void {
  let written = 0;
  while (written < bytes.length) written += writeSync(fd, bytes, written);
}
