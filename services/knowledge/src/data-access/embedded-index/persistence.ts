import { existsSync, mkdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { lockDirectory, SegmentedJournal, writeFileAtomic } from '@support-agent/shared';
import { INDEX_SCHEMA } from '../../domain/fingerprint.js';
import type { JournalRecord } from './records.js';

/**
 * The files of one collection, under DATA_DIR/knowledge/<collection>/:
 *
 *   meta.json                      collection name, schema, dimensions (written once)
 *   LOCK                           pid of the one process writing the collection
 *   CURRENT                        `gen-NNNNNN`: the generation in use (absent: gen-000001)
 *   gen-NNNNNN/segment-NNNNNN.jsonl  the journal of that generation (records.ts), segmented
 *   vectors/<n>.i8                 spilled int8 vectors (derived, rewritten at every start)
 *
 * Compaction writes the live records into the next generation's directory; switching
 * CURRENT (an atomic rename) commits it, then the old generation is removed. A crash before
 * the switch leaves the old generation in use (the half-written one is overwritten next time).
 */
export interface CollectionMeta {
  collection: string;
  schema: string;
  dimensions: number;
}

/** Records per journal segment: bounds the size of each file read at start-up. */
export const SEGMENT_RECORDS = 16_384;

export function readMeta(collectionDir: string): CollectionMeta {
  return JSON.parse(readFileSync(join(collectionDir, 'meta.json'), 'utf8')) as CollectionMeta;
}

export interface CollectionFilesOptions {
  readOnly: boolean;
  segmentRecords: number;
}

export class CollectionFiles {
  private generation = 1;
  private journalOf: SegmentedJournal<JournalRecord> | undefined;
  private release: (() => void) | undefined;

  constructor(
    readonly dir: string,
    readonly collection: string,
    private readonly options: CollectionFilesOptions,
  ) {}

  /** The journal of the generation in use (after openJournal). */
  get journal(): SegmentedJournal<JournalRecord> {
    if (!this.journalOf) throw new Error(`embedded index ${this.collection} is not open`);
    return this.journalOf;
  }

  /**
   * Checks the stored vectors' size, or creates the collection (meta.json) when it does not
   * exist and the collection is opened for writing.
   */
  openMeta(dimensions: number): void {
    if (existsSync(join(this.dir, 'meta.json'))) {
      const meta = readMeta(this.dir);
      if (meta.dimensions !== dimensions) {
        throw new Error(
          `embedded index ${this.collection}: stored vectors have ${meta.dimensions} dimensions, not ${dimensions}`,
        );
      }
    } else if (this.options.readOnly) {
      throw new Error(`embedded index ${this.collection} does not exist`);
    } else {
      mkdirSync(this.dir, { recursive: true });
      const meta: CollectionMeta = {
        collection: this.collection,
        schema: INDEX_SCHEMA,
        dimensions,
      };
      writeFileAtomic(join(this.dir, 'meta.json'), JSON.stringify(meta, null, 2) + '\n');
    }
  }

  /**
   * One writer per collection directory: a second process (say, the re-index command
   * while the service runs) would append to the journal behind the first one's back.
   */
  lock(): void {
    this.release ??= lockDirectory(this.dir, 'knowledge');
  }

  unlock(): void {
    this.release?.();
    this.release = undefined;
  }

  /** Opens the journal of the generation in use, to be replayed. */
  openJournal(): SegmentedJournal<JournalRecord> {
    this.journalOf?.close();
    this.generation = readGeneration(this.dir);
    this.journalOf = this.journalIn(this.generationDir(this.generation), this.options.readOnly);
    return this.journalOf;
  }

  /** An empty journal for the next generation, open for appending (see commitGeneration). */
  nextGeneration(): SegmentedJournal<JournalRecord> {
    const dir = this.generationDir(this.generation + 1);
    rmSync(dir, { recursive: true, force: true });
    mkdirSync(dir, { recursive: true });
    const journal = this.journalIn(dir, false);
    journal.startAppending();
    return journal;
  }

  /** Switches to the generation `next` holds (written and fsynced) and removes the old one. */
  commitGeneration(next: SegmentedJournal<JournalRecord>): void {
    const old = this.generationDir(this.generation);
    this.journalOf?.close();
    this.journalOf = next;
    this.generation++;
    writeFileAtomic(join(this.dir, 'CURRENT'), `${generationName(this.generation)}\n`);
    rmSync(old, { recursive: true, force: true });
  }

  close(): void {
    this.journalOf?.close();
    this.journalOf = undefined;
    this.unlock();
  }

  private journalIn(dir: string, readOnly: boolean): SegmentedJournal<JournalRecord> {
    return new SegmentedJournal<JournalRecord>(dir, {
      segmentRecords: this.options.segmentRecords,
      readOnly,
    });
  }

  private generationDir(generation: number): string {
    return join(this.dir, generationName(generation));
  }
}

const generationName = (n: number) => `gen-${String(n).padStart(6, '0')}`;

function readGeneration(dir: string): number {
  const path = join(dir, 'CURRENT');
  if (!existsSync(path)) return 1;
  const match = /^gen-(\d+)$/.exec(readFileSync(path, 'utf8').trim());
  if (!match) throw new Error(`unreadable ${path}`);
  return Number(match[1]);
}
