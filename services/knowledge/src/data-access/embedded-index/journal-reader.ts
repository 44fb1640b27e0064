import type { SegmentLine } from '@support-agent/shared';
import { LRUCache } from 'lru-cache';
import { parseEntryText, type EntryTextRecord, type ReadLine } from './records.js';

/** Default bound of the text kept per collection (what a search's results show). */
export const DEFAULT_TEXT_CACHE_BYTES = 4 * 1024 * 1024;

/**
 * Reads records back from one journal generation by position. The text fields of the lines
 * read for search results are kept (least recently used first out, bounded in bytes): the
 * entries a knowledge base is asked about most come up again and again, and each read is a
 * `pread` and a JSON parse. A line never changes once written, so what is kept stays true.
 */
export class JournalReader {
  private readonly texts: LRUCache<number, EntryTextRecord> | undefined;

  constructor(
    /** The bytes of the line at a position. */
    readonly line: ReadLine,
    textCacheBytes = DEFAULT_TEXT_CACHE_BYTES,
  ) {
    this.texts =
      textCacheBytes > 0
        ? new LRUCache({ maxSize: textCacheBytes, sizeCalculation: textBytes })
        : undefined;
  }

  /** The text fields of the put record at `at` (its vectors left undecoded). */
  text(at: SegmentLine): EntryTextRecord {
    // Segments hold at most a few hundred MB: segment and offset as one exact number.
    const key = at.segment * 2 ** 40 + at.offset;
    let record = this.texts?.get(key);
    if (record === undefined) {
      record = parseEntryText(this.line(at));
      // Shared by every later reader of the line: its tags must stay as read.
      Object.freeze(record.g);
      this.texts?.set(key, record);
    }
    return record;
  }
}

/** Roughly what a record's strings take in memory (two bytes per code unit, plus headers). */
function textBytes(r: EntryTextRecord): number {
  let units = r.q.length + r.a.length + r.id.length;
  for (const tag of r.g ?? []) units += tag.length;
  return 2 * units + 256;
}
