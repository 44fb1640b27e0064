// A full disk for the fault suites: a small tmpfs mounted where a store keeps its files, filled
// to the last byte by a filler file, then freed by deleting it. Needs root (mount); suites skip
// when they cannot mount.
import { execFileSync } from 'node:child_process';
import { closeSync, mkdirSync, openSync, rmSync, statfsSync, writeSync, fsyncSync } from 'node:fs';
import { join } from 'node:path';

/** Why a tmpfs cannot be mounted here (not root, no mount), or undefined when it can. */
export function tmpfsUnavailable(): string | undefined {
  if (process.getuid?.() !== 0) return 'needs root to mount a tmpfs';
  try {
    execFileSync('mount', ['--version'], { stdio: 'ignore' });
    return undefined;
  } catch {
    return 'no mount command';
  }
}

export class SmallDisk {
  private readonly filler: string;

  private constructor(readonly dir: string) {
    this.filler = join(dir, '.disk-filler');
  }

  /** Mounts a tmpfs of `sizeMiB` on `dir` (created when missing). */
  static mount(dir: string, sizeMiB: number): SmallDisk {
    mkdirSync(dir, { recursive: true });
    execFileSync('mount', ['-t', 'tmpfs', '-o', `size=${sizeMiB}m,mode=0755`, 'tmpfs', dir]);
    return new SmallDisk(dir);
  }

  /** Bytes still free (tmpfs keeps no reserve for root). */
  freeBytes(): number {
    const s = statfsSync(this.dir);
    return Number(s.bavail) * Number(s.bsize);
  }

  /**
   * Writes the filler until the disk refuses one more byte (ENOSPC): big blocks first, then
   * smaller ones, down to single bytes. Returns the bytes written.
   */
  fill(): number {
    const fd = openSync(this.filler, 'a');
    let written = 0;
    try {
      for (const size of [1 << 20, 1 << 16, 4096, 512, 64, 1]) {
        const block = Buffer.alloc(size, 0x2e);
        for (;;) {
          try {
            written += writeSync(fd, block);
          } catch (err) {
            if ((err as NodeJS.ErrnoException).code === 'ENOSPC') break;
            throw err;
          }
        }
      }
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    return written;
  }

  /** Deletes the filler: the space is back at once. */
  free(): void {
    rmSync(this.filler, { force: true });
  }

  /** Unmounts (lazily: a process that still has a file open there does not block it). */
  unmount(): void {
    this.free();
    try {
      execFileSync('umount', ['-l', this.dir], { stdio: 'ignore' });
    } catch {
      // already unmounted
    }
  }
}
