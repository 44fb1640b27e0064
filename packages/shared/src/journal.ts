import {
  fsync,
  write,
  openSync,
  fsyncSync,
  closeSync,
  readFileSync,
  readSync,
  existsSync,
  fstatSync,
  ftruncateSync,
  mkdirSync,
  readdirSync,
  truncateSync,
} from 'node:fs';
import { dirname, join } from 'node:path';
import { writeFileAtomic, writeFully } from './atomic-file.js';
import { storageFull } from './storage-full.js';

/** Where a record's line is in its file: byte offset and length (newline excluded). */
export interface JournalLine {
  offset: number;
  length: number;
}

export interface JsonlJournalOptions {
  /** Only read the file: a torn last line is skipped but left in place, and appends throw. */
  readOnly?: boolean;
  /** Writes bytes at the file's end (writeFully by default): a seam to inject write faults. */
  write?: (fd: number, bytes: Buffer) => void;
}

/**
 * An append-only JSON-lines file: the persistence of the embedded adapters.
 * Each batch of records is written and fsynced before append() returns, so an
 * acknowledged write survives a crash; replay() rebuilds state at start-up.
 * A torn last line (crash mid-write) is cut off at replay: it was never acknowledged.
 * A write that fails (a full disk: ENOSPC) is cut back to the last complete record at once,
 * so the next append after space is freed starts on a clean line; the error is a retryable
 * service_unavailable. Every record's position is known, so a record can be read back by
 * itself later.
 */
export class JsonlJournal<T> {
  private fd: number | undefined;
  private readFd: number | undefined;
  /** Bytes in the file, as replayed and appended here. */
  private size = 0;
  /** Records in the file: replayed plus appended. */
  records = 0;
  /** Whether replay found a torn last line (and, unless read-only, cut it off). */
  torn = false;
  /** Lines in the middle of the file that replay could not read (see replay). */
  damaged = 0;
  /** A failed write left bytes after `size` that could not be cut yet. */
  private dirty = false;

  constructor(
    readonly path: string,
    private readonly options: JsonlJournalOptions = {},
  ) {}

  /**
   * Calls `apply` for every stored record, in order, with where its line is; then, unless
   * read-only, opens the file for appending. Returns how many records there were.
   *
   * A line in the middle that is not JSON is never fatal: earlier versions could leave the
   * start of a failed write in front of the next record on the same line, so the record that
   * ends the line is salvaged when it parses by itself; otherwise the line is skipped.
   * `damaged` counts them.
   */
  replay(apply: (record: T, line: JournalLine) => void): number {
    const readOnly = this.options.readOnly === true;
    if (!readOnly) mkdirSync(dirname(this.path), { recursive: true });
    let count = 0;
    if (existsSync(this.path)) {
      const bytes = readFileSync(this.path);
      // Everything after the last newline is a record whose write never completed.
      const end = bytes.lastIndexOf(0x0a) + 1;
      this.torn = end < bytes.length;
      if (this.torn && !readOnly) truncateSync(this.path, end);
      for (let start = 0; start < end;) {
        const eol = bytes.indexOf(0x0a, start);
        if (eol > start) {
          const parsed = parseLine<T>(bytes, start, eol);
          if (parsed.offset !== start) this.damaged++;
          if (parsed.record !== undefined) {
            apply(parsed.record, { offset: parsed.offset, length: eol - parsed.offset });
            count++;
          }
        }
        start = eol + 1;
      }
      this.size = end;
    }
    this.records = count;
    if (!readOnly) this.open();
    return count;
  }

  append(record: T): JournalLine {
    return this.appendMany([record])[0]!;
  }

  /** Appends records with a single write and fsync; returns where each line landed. */
  appendMany(records: T[]): JournalLine[] {
    if (records.length === 0) return [];
    const { bytes, at, end } = this.prepare(records);
    try {
      (this.options.write ?? writeFully)(this.fd!, bytes);
      fsyncSync(this.fd!);
    } catch (err) {
      this.failed(err);
    }
    return this.appended(records.length, end, at);
  }

  /**
   * appendMany without holding the event loop: the write and the fsync run on libuv's thread
   * pool (a large batch on a busy disk can take hundreds of milliseconds), and the records
   * count as appended once both are done. The caller runs appends one at a time: any other
   * append while this one is in flight throws.
   */
  async appendManyAsync(records: T[]): Promise<JournalLine[]> {
    if (records.length === 0) return [];
    const { bytes, at, end } = this.prepare(records);
    this.inFlight = true;
    try {
      if (this.options.write) this.options.write(this.fd!, bytes);
      else await writeFullyAsync(this.fd!, bytes);
      await new Promise<void>((resolve, reject) =>
        fsync(this.fd!, (err) => (err ? reject(err) : resolve())),
      );
    } catch (err) {
      this.failed(err);
    } finally {
      this.inFlight = false;
    }
    return this.appended(records.length, end, at);
  }

  /** An asynchronous append is being written. */
  inFlight = false;

  private prepare(records: T[]): { bytes: Buffer; at: JournalLine[]; end: number } {
    if (this.options.readOnly) throw new Error(`journal ${this.path} is open read-only`);
    if (this.inFlight) throw new Error(`journal ${this.path}: an append is already in flight`);
    this.open();
    const lines = records.map((r) => JSON.stringify(r));
    const at: JournalLine[] = [];
    let offset = this.size;
    for (const line of lines) {
      const length = Buffer.byteLength(line);
      at.push({ offset, length });
      offset += length + 1;
    }
    this.cutBack(true);
    return { bytes: Buffer.from(lines.join('\n') + '\n'), at, end: offset };
  }

  /** Part of the batch may be in the file: cut it, so no torn line stays before the next. */
  private failed(err: unknown): never {
    this.dirty = true;
    this.cutBack(false);
    throw storageFull(err, 'the store');
  }

  private appended(count: number, end: number, at: JournalLine[]): JournalLine[] {
    this.size = end;
    this.records += count;
    return at;
  }

  /** The record whose line is at `line` (a positional read: page cache, no seek state). */
  read(line: JournalLine): T {
    return JSON.parse(this.readBytes(line).toString('utf8')) as T;
  }

  /** The bytes of the line at `line`, for callers that need only part of a record. */
  readBytes(line: JournalLine): Buffer {
    this.readFd ??= openSync(this.path, 'r');
    const buf = Buffer.allocUnsafe(line.length);
    let got = 0;
    while (got < line.length) {
      const n = readSync(this.readFd, buf, got, line.length - got, line.offset + got);
      if (n === 0) throw new Error(`journal ${this.path} is shorter than expected`);
      got += n;
    }
    return buf;
  }

  /**
   * Replaces the whole file by `records` (a snapshot of the live state), atomically: written to
   * a temporary file and fsynced, renamed over the journal, the directory fsynced. A crash
   * leaves either the old journal or the new one. Appends continue after the snapshot.
   */
  rewrite(records: T[]): void {
    if (this.options.readOnly) throw new Error(`journal ${this.path} is open read-only`);
    const bytes = Buffer.from(records.map((r) => JSON.stringify(r) + '\n').join(''));
    this.close();
    try {
      writeFileAtomic(this.path, bytes, { tmp: `${this.path}.compact`, syncDirectory: true });
    } catch (err) {
      throw storageFull(err, 'the store');
    }
    this.size = bytes.length;
    this.records = records.length;
    this.torn = false;
  }

  /** Stops appending here; the file stays readable. */
  seal(): void {
    if (this.fd !== undefined) closeSync(this.fd);
    this.fd = undefined;
  }

  close(): void {
    this.seal();
    if (this.readFd !== undefined) closeSync(this.readFd);
    this.readFd = undefined;
  }

  /** Cuts the file back to its last complete record after a failed write. */
  private cutBack(mustSucceed: boolean): void {
    if (!this.dirty) return;
    try {
      ftruncateSync(this.fd!, this.size);
      fsyncSync(this.fd!);
      this.dirty = false;
    } catch (err) {
      if (mustSucceed) throw storageFull(err, 'the store');
    }
  }

  private open(): void {
    if (this.fd === undefined) {
      mkdirSync(dirname(this.path), { recursive: true });
      this.fd = openSync(this.path, 'a');
      this.size = fstatSync(this.fd).size;
    }
  }
}

/**
 * The record of the line bytes[start, eol), or, when it is not JSON, the record that ends it
 * (the line a failed write's leftover bytes ran into), with the offset where it starts.
 */
function parseLine<T>(bytes: Buffer, start: number, eol: number): { record?: T; offset: number } {
  try {
    return { record: JSON.parse(bytes.toString('utf8', start, eol)) as T, offset: start };
  } catch {
    for (let at = bytes.indexOf('{"', start + 1); at !== -1 && at < eol;) {
      try {
        return { record: JSON.parse(bytes.toString('utf8', at, eol)) as T, offset: at };
      } catch {
        at = bytes.indexOf('{"', at + 1);
      }
    }
    return { offset: eol };
  }
}

/** Where a record's line is in a segmented journal. */
export interface SegmentLine extends JournalLine {
  segment: number;
}

export interface SegmentedJournalOptions extends JsonlJournalOptions {
  /** A batch goes to a new segment once the current one holds this many records. */
  segmentRecords: number;
}

const segmentName = (n: number) => `segment-${String(n).padStart(6, '0')}.jsonl`;

/** writeFully on libuv's thread pool. */
async function writeFullyAsync(fd: number, bytes: Buffer): Promise<void> {
  let written = 0;
  while (written < bytes.length) {
    written += await new Promise<number>((resolve, reject) =>
      write(fd, bytes, written, bytes.length - written, null, (err, n) =>
        err ? reject(err) : resolve(n),
      ),
    );
  }
}

/** Segment numbers in a directory, ascending. */
function listSegments(dir: string): number[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir)
    .map((name) => /^segment-(\d+)\.jsonl$/.exec(name))
    .filter((m): m is RegExpExecArray => m !== null)
    .map((m) => Number(m[1]))
    .sort((a, b) => a - b);
}

/**
 * A journal kept as numbered JSON-lines files in one directory (`segment-000001.jsonl`, …),
 * for journals too large to read back as one file: each segment is a JsonlJournal, and a
 * record's position (segment, offset, length) stays valid for positional reads for as long
 * as the directory exists.
 */
export class SegmentedJournal<T> {
  private readonly segments = new Map<number, JsonlJournal<T>>();
  private writer: JsonlJournal<T> | undefined;
  private last = 0;

  constructor(
    readonly dir: string,
    private readonly options: SegmentedJournalOptions,
  ) {}

  /**
   * Replays every segment in order (see JsonlJournal.replay); `onTorn` hears of each segment
   * whose torn last line was dropped. Returns how many records there were.
   */
  replay(apply: (record: T, at: SegmentLine) => void, onTorn?: (path: string) => void): number {
    let count = 0;
    const segments = listSegments(this.dir);
    for (const segment of segments) {
      const journal = new JsonlJournal<T>(join(this.dir, segmentName(segment)), this.options);
      // Readable while it is replayed: applying a record may read an earlier one back.
      this.segments.set(segment, journal);
      this.last = segment;
      count += journal.replay((record, line) =>
        apply(record, { segment, offset: line.offset, length: line.length }),
      );
      // Only the last segment may be appended to again (see startAppending).
      if (segment !== segments[segments.length - 1] || journal.torn) journal.seal();
      if (journal.torn) onTorn?.(journal.path);
    }
    return count;
  }

  /**
   * Opens the journal for appending: at the end of the last segment, or in a new one when
   * there is none or its last line was torn (a crashed write is never appended to).
   */
  startAppending(): void {
    const last = this.segments.get(this.last);
    if (last && !last.torn) this.writer = last;
    else this.rotate();
  }

  /** Appends records with a single write and fsync; returns where each line landed. */
  appendMany(records: T[]): SegmentLine[] {
    if (records.length === 0) return [];
    const segment = this.writerFor();
    return this.writer!.appendMany(records).map((line) => ({ segment, ...line }));
  }

  /** appendMany off the event loop (see JsonlJournal.appendManyAsync): one at a time. */
  async appendManyAsync(records: T[]): Promise<SegmentLine[]> {
    if (records.length === 0) return [];
    const segment = this.writerFor();
    return (await this.writer!.appendManyAsync(records)).map((line) => ({ segment, ...line }));
  }

  /** The segment appends go to, a new one when the current one is full. */
  private writerFor(): number {
    if (this.writer?.inFlight)
      throw new Error(`journal ${this.dir}: an append is already in flight`);
    if (!this.writer || this.writer.records >= this.options.segmentRecords) this.rotate();
    return this.last;
  }

  /** The record whose line is at `at`. */
  read(at: SegmentLine): T {
    return this.segment(at).read(at);
  }

  /** The bytes of the line at `at` (see JsonlJournal.readBytes). */
  readBytes(at: SegmentLine): Buffer {
    return this.segment(at).readBytes(at);
  }

  private segment(at: SegmentLine): JsonlJournal<T> {
    const journal = this.segments.get(at.segment);
    if (!journal) throw new Error(`journal ${this.dir} has no segment ${at.segment}`);
    return journal;
  }

  close(): void {
    for (const journal of this.segments.values()) journal.close();
    this.segments.clear();
    this.writer = undefined;
  }

  /** Starts the next segment (creating its file). */
  private rotate(): void {
    if (this.options.readOnly) throw new Error(`journal ${this.dir} is open read-only`);
    this.writer?.seal();
    const segment = ++this.last;
    this.writer = new JsonlJournal<T>(join(this.dir, segmentName(segment)));
    this.writer.replay(() => undefined);
    this.segments.set(segment, this.writer);
  }
}
