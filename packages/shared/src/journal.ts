import {
  openSync,
  writeSync,
  fsyncSync,
  closeSync,
  readFileSync,
  existsSync,
  mkdirSync,
} from 'node:fs';
import { dirname } from 'node:path';

/**
 * An append-only JSON-lines file: the persistence of the embedded adapters.
 * Each record is written and fsynced before append() returns, so an
 * acknowledged write survives a crash; replay() rebuilds state at start-up.
 * A torn last line (crash mid-write) is ignored.
 */
export class JsonlJournal<T> {
  private fd: number | undefined;

  constructor(readonly path: string) {}

  /** Calls `apply` for every stored record, in order, then opens the file for appending. */
  replay(apply: (record: T) => void): number {
    mkdirSync(dirname(this.path), { recursive: true });
    let count = 0;
    if (existsSync(this.path)) {
      const text = readFileSync(this.path, 'utf8');
      const lines = text.split('\n');
      for (let i = 0; i < lines.length; i++) {
        const line = lines[i];
        if (!line) continue;
        try {
          apply(JSON.parse(line) as T);
          count++;
        } catch (err) {
          // Only the very last line may be torn by a crash; anything else is corruption.
          if (i < lines.length - 1 && lines.slice(i + 1).some((l) => l.length > 0)) throw err;
        }
      }
      // Terminate a torn last line so the next record starts on its own line.
      if (text.length > 0 && !text.endsWith('\n')) {
        this.open();
        writeSync(this.fd!, '\n');
      }
    }
    this.open();
    return count;
  }

  append(record: T): void {
    this.appendMany([record]);
  }

  /** Appends records with a single write and fsync. */
  appendMany(records: T[]): void {
    if (records.length === 0) return;
    this.open();
    writeSync(this.fd!, records.map((r) => JSON.stringify(r)).join('\n') + '\n');
    fsyncSync(this.fd!);
  }

  close(): void {
    if (this.fd !== undefined) closeSync(this.fd);
    this.fd = undefined;
  }

  private open(): void {
    if (this.fd === undefined) {
      mkdirSync(dirname(this.path), { recursive: true });
      this.fd = openSync(this.path, 'a');
    }
  }
}
