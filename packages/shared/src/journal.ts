import {
  openSync,
  writeSync,
  fsyncSync,
  closeSync,
  readFileSync,
  existsSync,
  mkdirSync,
  truncateSync,
} from 'node:fs';
import { dirname } from 'node:path';

/**
 * An append-only JSON-lines file: the persistence of the embedded adapters.
 * Each record is written and fsynced before append() returns, so an
 * acknowledged write survives a crash; replay() rebuilds state at start-up.
 * A torn last line (crash mid-write) is cut off at replay: it was never acknowledged.
 */
export class JsonlJournal<T> {
  private fd: number | undefined;

  constructor(readonly path: string) {}

  /** Calls `apply` for every stored record, in order, then opens the file for appending. */
  replay(apply: (record: T) => void): number {
    mkdirSync(dirname(this.path), { recursive: true });
    let count = 0;
    if (existsSync(this.path)) {
      const bytes = readFileSync(this.path);
      // Everything after the last newline is a record whose write never completed.
      const end = bytes.lastIndexOf(0x0a) + 1;
      if (end < bytes.length) truncateSync(this.path, end);
      const lines = bytes.subarray(0, end).toString('utf8').split('\n');
      for (const line of lines) {
        if (!line) continue;
        apply(JSON.parse(line) as T);
        count++;
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
