import { closeSync, openSync, readFileSync, rmSync, writeSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';

const heldHere = new Set<string>();

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * Takes `<dir>/LOCK` so two processes never append to the same journal. A lock
 * left by a process that died is taken over; returns the release function.
 */
export function lockDirectory(dir: string, owner = 'service'): () => void {
  mkdirSync(dir, { recursive: true });
  const path = join(dir, 'LOCK');
  if (heldHere.has(path)) throw new Error(`${dir} is already open in this process`);
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      const fd = openSync(path, 'wx');
      try {
        writeSync(fd, `${process.pid}\n`);
      } finally {
        closeSync(fd);
      }
      heldHere.add(path);
      return () => {
        heldHere.delete(path);
        rmSync(path, { force: true });
      };
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      const holder = Number.parseInt(readFileSync(path, 'utf8'), 10);
      // Our own pid here means a previous incarnation (containers are always pid 1).
      if (Number.isInteger(holder) && holder !== process.pid && isAlive(holder)) {
        throw new Error(`${dir} is in use by process ${holder}; one ${owner} process per DATA_DIR`);
      }
      rmSync(path, { force: true });
    }
  }
  throw new Error(`could not lock ${dir}`);
}
