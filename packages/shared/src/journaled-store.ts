import { join } from 'node:path';
import { lockDirectory } from './dir-lock.js';
import { JsonlJournal } from './journal.js';

/**
 * The base of the embedded stores: state in memory, every change journaled (fsynced) before it
 * is applied, so a restart that replays the journal rebuilds exactly what was acknowledged.
 * With an `owner` the directory is locked: one process per directory.
 */
export abstract class JournaledStore<R> {
  protected readonly journal: JsonlJournal<R>;
  private readonly releaseLock: (() => void) | undefined;

  protected constructor(
    readonly dir: string,
    file: string,
    owner?: string,
  ) {
    this.releaseLock = owner === undefined ? undefined : lockDirectory(dir, owner);
    this.journal = new JsonlJournal<R>(join(dir, file));
  }

  /** Applies one record (replayed or just journaled) to the state in memory. */
  protected abstract apply(record: R): unknown;

  /** Journals a change, then applies it: what is in memory has always been written first. */
  protected record(record: R): void {
    this.journal.append(record);
    this.apply(record);
  }

  async close(): Promise<void> {
    this.journal.close();
    this.releaseLock?.();
  }
}
