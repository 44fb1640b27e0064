import type { SegmentLine } from '@support-agent/shared';
import type { IndexedEntry, StoredEntry } from '../../domain/ports.js';

/**
 * The journal's records, one JSON line each (the on-disk format: existing data
 * directories are read with it, so fields are only ever added).
 */

/** An entry written (inserted or replacing the same id). */
export interface PutRecord {
  t: 'put';
  /** Organization. */
  o: string;
  id: string;
  /** Question, answer, tags. */
  q: string;
  a: string;
  g: string[];
  /** Write time, milliseconds since the epoch. */
  u: number;
  /** Content hash. */
  h: string;
  /** Dense vector, float32 little-endian, base64. */
  d: string;
  /** Sparse indices (uint32) and values (float32), little-endian, base64. */
  si: string;
  sv: string;
}

/** Entries deleted (only ids that existed are written). */
export interface DeleteRecord {
  t: 'del';
  o: string;
  ids: string[];
}

export type JournalRecord = PutRecord | DeleteRecord;

/** Reads the bytes of the journal line at a position. */
export type ReadLine = (at: SegmentLine) => Buffer;

/** A put record's text fields (what search results and stored entries show). */
export type EntryTextRecord = Pick<PutRecord, 't' | 'o' | 'id' | 'q' | 'a' | 'g'>;

export const parseRecord = (line: Buffer): JournalRecord =>
  JSON.parse(line.toString('utf8')) as JournalRecord;

/**
 * The text fields of a put record's line without decoding the rest: the line is
 * `{"t":…,"o":…,"id":…,"q":…,"a":…,"g":[…],"u":…` then the hash and the base64 vectors
 * (JSON.stringify keeps toPutRecord's order), and `,"u":` cannot occur inside a JSON
 * string (its quotes are escaped), so the object up to there is the text. A search reads
 * the text of its few results only, and the vectors are most of each line.
 */
export function parseEntryText(line: Buffer): EntryTextRecord {
  const cut = line.indexOf(',"u":');
  if (cut > 0) {
    try {
      return JSON.parse(`${line.toString('utf8', 0, cut)}}`) as EntryTextRecord;
    } catch {
      // Not the layout above: decode the whole line.
    }
  }
  return parseRecord(line) as PutRecord;
}

const f32ToB64 = (v: Float32Array) =>
  Buffer.from(v.buffer, v.byteOffset, v.byteLength).toString('base64');
const u32ToB64 = (v: Uint32Array) =>
  Buffer.from(v.buffer, v.byteOffset, v.byteLength).toString('base64');

/** Decodes base64 into an aligned copy (Buffers from base64 may start at any byte offset). */
function b64ToBytes(b64: string): ArrayBuffer {
  const buf = Buffer.from(b64, 'base64');
  const out = new ArrayBuffer(buf.length);
  new Uint8Array(out).set(buf);
  return out;
}

export const denseOfRecord = (r: PutRecord) => new Float32Array(b64ToBytes(r.d));
export const termsOfRecord = (r: PutRecord) => new Uint32Array(b64ToBytes(r.si));
export const weightsOfRecord = (r: PutRecord) => new Float32Array(b64ToBytes(r.sv));

export function toPutRecord(orgId: string, e: IndexedEntry): PutRecord {
  return {
    t: 'put',
    o: orgId,
    id: e.id,
    q: e.question,
    a: e.answer,
    g: e.tags,
    u: e.updatedAt,
    h: e.contentHash,
    d: f32ToB64(e.dense),
    si: u32ToB64(Uint32Array.from(e.sparse.indices)),
    sv: f32ToB64(Float32Array.from(e.sparse.values)),
  };
}

/** Where a JournalEntry reads its text and content hash (the organization's index). */
export interface EntrySource {
  textOf(id: string, at: SegmentLine): EntryTextRecord;
  contentHashAt(slot: number, id: string, at: SegmentLine): string;
}

/**
 * A stored entry whose text is read from the journal when first asked for. A search makes
 * one per candidate and reads the text of a few, so it holds positions, not closures.
 */
export class JournalEntry implements StoredEntry {
  private record: EntryTextRecord | undefined;
  private hash: string | undefined;

  constructor(
    readonly id: string,
    readonly updatedAt: number,
    private readonly source: EntrySource,
    private readonly slot: number,
    private readonly at: SegmentLine,
  ) {}

  get question(): string {
    return this.put().q;
  }

  get answer(): string {
    return this.put().a;
  }

  get tags(): string[] {
    return this.put().g;
  }

  get contentHash(): string {
    this.hash ??= this.source.contentHashAt(this.slot, this.id, this.at);
    return this.hash;
  }

  private put(): EntryTextRecord {
    this.record ??= this.source.textOf(this.id, this.at);
    return this.record;
  }
}
