import {
  existsSync,
  fstatSync,
  readSync,
  mkdirSync,
  readFileSync,
  readdirSync,
  renameSync,
  rmSync,
  truncateSync,
  writeFileSync,
  writeSync,
  openSync,
  fsyncSync,
  closeSync,
} from 'node:fs';
import { join } from 'node:path';
import type { Logger } from '@support-agent/shared';
import { INDEX_SCHEMA, isCollectionOf } from '../domain/fingerprint.js';
import type {
  Candidate,
  CandidateQuery,
  CandidateSet,
  EntryPage,
  EntryVersion,
  IndexCatalog,
  IndexedEntry,
  KnowledgeIndex,
  SparseVector,
  StoredEntry,
  WriteOutcome,
} from '../domain/ports.js';
import { compareIds, idf } from '../domain/scoring.js';

/**
 * The in-process index used by `npm start`: the same hybrid candidates as Qdrant
 * (BM25 over an inverted index + dense cosine), persisted as an fsynced JSON-lines
 * journal under DATA_DIR/knowledge/<collection>/.
 *
 * Speed at 100k entries per organization comes from the inverted index: only
 * entries sharing a term with the query are touched, and only the best of those
 * are rescored densely. Small organizations (entries × dimensions within
 * `exactDenseBudget`) also get an exact brute-force dense pass, so purely semantic
 * matches are found too.
 *
 * Memory (what limits an in-process index): what search needs per entry is in memory
 * in a few large typed arrays (dense vectors in fixed-size chunks, float32 or, once an
 * organization is large, int8 with a scale per vector; postings; write time and content
 * hash); the entry's text, tags and sparse vector stay in the journal, and a journal
 * line is read back (page cache) only for the few results a search returns, for
 * re-indexing and when an entry is replaced or deleted. Full int8 chunks go to a spill
 * file (VectorSpill): a large organization reads vectors only for its query's candidates.
 */

/** Records per journal segment: bounds the size of each file read at start-up. */
const SEGMENT_RECORDS = 16_384;
/** Multiply-adds of a brute-force dense pass allowed per query (≈4 ms). */
export const DEFAULT_EXACT_DENSE_BUDGET = 4_000_000;
/**
 * Organizations with more entries keep their dense vectors as int8 (a quarter of the memory;
 * cosines within ~1e-3 of float32). Small ones keep float32: exact, and cheap anyway.
 */
export const DEFAULT_QUANTIZE_ABOVE = 8_192;
/** Dense vectors are stored in chunks of this many rows: growing never copies them. */
const CHUNK_ROWS = 1_024;

interface PutRecord {
  t: 'put';
  o: string;
  id: string;
  q: string;
  a: string;
  g: string[];
  u: number;
  h: string;
  /** Dense vector, float32 little-endian, base64. */
  d: string;
  /** Sparse indices (uint32) and values (float32), base64. */
  si: string;
  sv: string;
}

interface DeleteRecord {
  t: 'del';
  o: string;
  ids: string[];
}

type JournalRecord = PutRecord | DeleteRecord;

interface CollectionMeta {
  collection: string;
  schema: string;
  dimensions: number;
}

interface Posting {
  slots: Int32Array;
  weights: Float32Array;
  length: number;
}

/** Where a journal line is: segment number, byte offset, byte length (newline excluded). */
interface LineRef {
  segment: number;
  offset: number;
  length: number;
}

/**
 * The journal segments of one generation: appended with one write + fsync per batch, and
 * read back line by line by position.
 */
class Segments {
  private readonly readFds = new Map<number, number>();
  private writeFd: number | undefined;
  private writeSegment = 0;
  private writeSize = 0;
  /** Records in the segment being written. */
  records = 0;

  constructor(
    readonly dir: string,
    private readonly readOnly: boolean,
  ) {}

  /**
   * Applies every complete line of a segment with its position. A torn last line (a crash
   * mid-write) was never acknowledged: it is cut off, like JsonlJournal does.
   */
  replay(segment: number, apply: (record: JournalRecord, ref: LineRef) => void): number {
    const path = this.pathOf(segment);
    const bytes = readFileSync(path);
    const end = bytes.lastIndexOf(0x0a) + 1;
    if (end < bytes.length && !this.readOnly) truncateSync(path, end);
    let count = 0;
    for (let start = 0; start < end;) {
      const eol = bytes.indexOf(0x0a, start);
      if (eol > start) {
        const record = JSON.parse(bytes.toString('utf8', start, eol)) as JournalRecord;
        apply(record, { segment, offset: start, length: eol - start });
        count++;
      }
      start = eol + 1;
    }
    return count;
  }

  /** Continues writing at the end of an existing segment. */
  resume(segment: number, records: number): void {
    this.closeWriter();
    this.writeSegment = segment;
    this.writeFd = openSync(this.pathOf(segment), 'a');
    this.writeSize = fstatSync(this.writeFd).size;
    this.records = records;
  }

  /** Starts the next segment. */
  rotate(segment: number): void {
    this.closeWriter();
    mkdirSync(this.dir, { recursive: true });
    this.writeSegment = segment;
    this.writeFd = openSync(this.pathOf(segment), 'a');
    this.writeSize = fstatSync(this.writeFd).size;
    this.records = 0;
  }

  get writing(): boolean {
    return this.writeFd !== undefined;
  }

  get segment(): number {
    return this.writeSegment;
  }

  /** Writes and fsyncs the records; returns where each line landed. */
  append(records: JournalRecord[]): LineRef[] {
    const lines = records.map((r) => JSON.stringify(r));
    const refs: LineRef[] = [];
    let offset = this.writeSize;
    for (const line of lines) {
      const length = Buffer.byteLength(line);
      refs.push({ segment: this.writeSegment, offset, length });
      offset += length + 1;
    }
    const all = Buffer.from(lines.join('\n') + '\n');
    let written = 0;
    while (written < all.length) written += writeSync(this.writeFd!, all, written);
    fsyncSync(this.writeFd!);
    this.writeSize = offset;
    this.records += records.length;
    return refs;
  }

  /** The record stored at `ref`. */
  read(ref: LineRef): JournalRecord {
    let fd = this.readFds.get(ref.segment);
    if (fd === undefined) {
      fd = openSync(this.pathOf(ref.segment), 'r');
      this.readFds.set(ref.segment, fd);
    }
    const buf = Buffer.allocUnsafe(ref.length);
    let got = 0;
    while (got < ref.length) {
      const n = readSync(fd, buf, got, ref.length - got, ref.offset + got);
      if (n === 0) throw new Error(`journal ${this.pathOf(ref.segment)} is shorter than expected`);
      got += n;
    }
    return JSON.parse(buf.toString('utf8')) as JournalRecord;
  }

  close(): void {
    this.closeWriter();
    for (const fd of this.readFds.values()) closeSync(fd);
    this.readFds.clear();
  }

  private closeWriter(): void {
    if (this.writeFd !== undefined) closeSync(this.writeFd);
    this.writeFd = undefined;
  }

  private pathOf(segment: number): string {
    return join(this.dir, segmentName(segment));
  }
}

/** A stored entry whose text is read from the journal when first asked for. */
class JournalEntry implements StoredEntry {
  private record: PutRecord | undefined;
  private hash: string | undefined;

  constructor(
    readonly id: string,
    readonly updatedAt: number,
    private readonly hashOf: () => string,
    private readonly load: () => PutRecord,
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
    this.hash ??= this.hashOf();
    return this.hash;
  }

  private put(): PutRecord {
    this.record ??= this.load();
    return this.record;
  }
}

const HEX64 = /^[0-9a-f]{64}$/;

/**
 * Where a large organization's int8 vectors go once a chunk of CHUNK_ROWS rows is full: a
 * file of fixed-size rows (row = slot × dimensions bytes). Big organizations read dense
 * vectors only for the ≤ 100 candidates of a query (their brute-force pass is over the
 * exact-dense budget), one `pread` each from the page cache, so keeping them in the process
 * only cost memory (≈ 0.5 KB per entry at 512 dimensions). The file is derived data: it is
 * rewritten from the journal at every start (no fsync) and deleted with its index.
 */
class VectorSpill {
  private fd: number | undefined;

  constructor(
    readonly path: string,
    private readonly rowBytes: number,
  ) {}

  /** Writes `rows` (whole rows, starting at row `first`). */
  write(first: number, rows: Int8Array): void {
    this.fd ??= openSync(this.path, 'w+');
    const bytes = new Uint8Array(rows.buffer, rows.byteOffset, rows.byteLength);
    let done = 0;
    while (done < bytes.length)
      done += writeSync(this.fd, bytes, done, bytes.length - done, first * this.rowBytes + done);
  }

  /** Reads `into.length / rowBytes` rows starting at row `first` into `into`. */
  read(first: number, into: Int8Array): Int8Array {
    const bytes = new Uint8Array(into.buffer, into.byteOffset, into.byteLength);
    let got = 0;
    while (got < bytes.length) {
      const n = readSync(this.fd!, bytes, got, bytes.length - got, first * this.rowBytes + got);
      if (n === 0) throw new Error(`vector spill file ${this.path} is shorter than expected`);
      got += n;
    }
    return into;
  }

  dispose(): void {
    if (this.fd !== undefined) closeSync(this.fd);
    this.fd = undefined;
    rmSync(this.path, { force: true });
  }
}

/** One organization's entries: slots are append-only until the org is compacted. */
class OrgIndex {
  size = 0;
  live = 0;
  capacity = 0;
  ids: (string | undefined)[] = [];
  alive = new Uint8Array(0);
  updatedAt = new Float64Array(0);
  /** sha256 content hashes, 32 bytes per slot (other formats, if any, in otherHashes). */
  hashes = new Uint8Array(0);
  readonly otherHashes = new Map<number, string>();
  /** Where each slot's journal line is. */
  refSegment = new Uint32Array(0);
  refOffset = new Float64Array(0);
  refLength = new Uint32Array(0);
  /**
   * Dense vectors in chunks of CHUNK_ROWS rows: float32, or int8 × scales once quantized;
   * `null`: a full int8 chunk that lives in the spill file.
   */
  chunks: Array<Float32Array | Int8Array | null> = [];
  quantized = false;
  scales = new Float32Array(0);
  readonly slotOf = new Map<string, number>();
  readonly postings = new Map<number, Posting>();
  readonly df = new Map<number, number>();
  /** Scratch accumulator for lexical scores and the slots it touched, reset after each query. */
  scratch = new Float32Array(0);
  touched = new Int32Array(0);
  private sortedIds: string[] | undefined;

  constructor(
    readonly dimensions: number,
    /** Live entries above which dense vectors are kept as int8. */
    readonly quantizeAbove: number,
    /** Reads a journal line back. */
    readonly read: (ref: LineRef) => JournalRecord,
    /** Where full int8 chunks go, if anywhere (else they stay in memory). */
    readonly spill?: VectorSpill,
  ) {}

  /** Forgets the spilled vectors (the index is being replaced or closed). */
  dispose(): void {
    this.spill?.dispose();
  }

  /** `sparse`, when given, is the record's sparse vector already decoded. */
  put(
    record: PutRecord,
    ref: LineRef,
    dense: Float32Array,
    sparse?: { indices: ArrayLike<number>; values: ArrayLike<number> },
  ): WriteOutcome {
    const previous = this.slotOf.get(record.id);
    if (previous !== undefined) this.kill(previous);
    else this.sortedIds = undefined;
    const slot = this.size++;
    this.ensureCapacity(this.size);
    if (!this.quantized && this.live + 1 > this.quantizeAbove) this.quantize();
    this.ids[slot] = record.id;
    this.alive[slot] = 1;
    this.updatedAt[slot] = record.u;
    if (HEX64.test(record.h)) this.hashes.set(Buffer.from(record.h, 'hex'), slot * 32);
    else this.otherHashes.set(slot, record.h);
    this.refSegment[slot] = ref.segment;
    this.refOffset[slot] = ref.offset;
    this.refLength[slot] = ref.length;
    this.writeDense(slot, dense);
    const indices = sparse?.indices ?? new Uint32Array(b64ToBytes(record.si));
    const values = sparse?.values ?? new Float32Array(b64ToBytes(record.sv));
    for (let i = 0; i < indices.length; i++) {
      const term = indices[i]!;
      this.df.set(term, (this.df.get(term) ?? 0) + 1);
      addPosting(this.postings, term, slot, values[i]!);
    }
    this.slotOf.set(record.id, slot);
    this.live++;
    return previous === undefined ? 'inserted' : 'updated';
  }

  remove(id: string): boolean {
    const slot = this.slotOf.get(id);
    if (slot === undefined) return false;
    this.kill(slot);
    this.slotOf.delete(id);
    this.sortedIds = undefined;
    return true;
  }

  /** True when dead slots outnumber live ones enough to be worth a rebuild. */
  needsCompaction(): boolean {
    const dead = this.size - this.live;
    return dead > 1024 && dead > this.live;
  }

  /** Rebuilds arrays and postings from the live slots (same journal lines). */
  compacted(spill?: VectorSpill): OrgIndex {
    const fresh = new OrgIndex(this.dimensions, this.quantizeAbove, this.read, spill);
    fresh.ensureCapacity(this.live);
    for (let slot = 0; slot < this.size; slot++) {
      if (!this.alive[slot]) continue;
      fresh.put(this.recordAt(slot), this.refOf(slot), this.denseOf(slot));
    }
    return fresh;
  }

  ids_(): string[] {
    this.sortedIds ??= [...this.slotOf.keys()].sort(compareIds);
    return this.sortedIds;
  }

  refOf(slot: number): LineRef {
    return {
      segment: this.refSegment[slot]!,
      offset: this.refOffset[slot]!,
      length: this.refLength[slot]!,
    };
  }

  /** The slot's journal record (its text, tags and both vectors as written). */
  recordAt(slot: number): PutRecord {
    return this.recordOf(this.ids[slot]!, this.refOf(slot));
  }

  private recordOf(id: string, ref: LineRef): PutRecord {
    const record = this.read(ref);
    if (record.t !== 'put' || record.id !== id)
      throw new Error(`journal line of entry ${id} does not match`);
    return record;
  }

  contentHashOf(slot: number): string {
    return (
      this.otherHashes.get(slot) ??
      Buffer.from(this.hashes.buffer, this.hashes.byteOffset + slot * 32, 32).toString('hex')
    );
  }

  /** The entry at a live slot; its text is read from the journal when first needed. */
  entryAt(slot: number): StoredEntry {
    // The line stays where it is even if the entry is replaced meanwhile.
    const id = this.ids[slot]!;
    const ref = this.refOf(slot);
    // Searches never ask for the hash (a hex string per candidate): it is read from the
    // line's own record when asked for, so it always matches the text served with it.
    return new JournalEntry(
      id,
      this.updatedAt[slot]!,
      () => this.contentHashAt(slot, id, ref),
      () => this.recordOf(id, ref),
    );
  }

  /** The content hash of entry `id` stored at `ref`: the slot's, unless the slot moved on. */
  private contentHashAt(slot: number, id: string, ref: LineRef): string {
    const current = this.refOf(slot);
    if (this.ids[slot] === id && current.segment === ref.segment && current.offset === ref.offset) {
      return this.contentHashOf(slot);
    }
    return this.recordOf(id, ref).h;
  }

  /** A plain copy of the entry (text read now). */
  storedEntryAt(slot: number): StoredEntry {
    const r = this.recordAt(slot);
    return {
      id: r.id,
      question: r.q,
      answer: r.a,
      tags: r.g,
      updatedAt: this.updatedAt[slot]!,
      contentHash: this.contentHashOf(slot),
    };
  }

  /** The slot's vector as float32 (a view, or a dequantized copy). */
  denseOf(slot: number): Float32Array {
    const dim = this.dimensions;
    const stored = this.chunks[Math.floor(slot / CHUNK_ROWS)]!;
    if (stored === null) {
      const row = this.spill!.read(slot, new Int8Array(dim));
      const out = new Float32Array(dim);
      const scale = this.scales[slot]!;
      for (let j = 0; j < dim; j++) out[j] = row[j]! * scale;
      return out;
    }
    const chunk = stored;
    const off = (slot % CHUNK_ROWS) * dim;
    if (chunk instanceof Float32Array) return chunk.subarray(off, off + dim);
    const out = new Float32Array(dim);
    const scale = this.scales[slot]!;
    for (let j = 0; j < dim; j++) out[j] = chunk[off + j]! * scale;
    return out;
  }

  /**
   * The slot's weights for the given terms, as a sparse vector (ascending ids): what lexical
   * scoring reads. Postings hold slots in ascending order, so each is a binary search.
   */
  sparseFor(slot: number, ids: readonly number[]): { indices: number[]; values: number[] } {
    const indices: number[] = [];
    const values: number[] = [];
    for (const id of ids) {
      const p = this.postings.get(id);
      if (!p) continue;
      let lo = 0;
      let hi = p.length - 1;
      while (lo <= hi) {
        const mid = (lo + hi) >> 1;
        const s = p.slots[mid]!;
        if (s === slot) {
          indices.push(id);
          values.push(p.weights[mid]!);
          break;
        }
        if (s < slot) lo = mid + 1;
        else hi = mid - 1;
      }
    }
    return { indices, values };
  }

  private writeDense(slot: number, v: Float32Array): void {
    const dim = this.dimensions;
    const c = Math.floor(slot / CHUNK_ROWS);
    // Chunks are allocated as slots reach them, never ahead (capacity grows by up to 2×).
    if (c === this.chunks.length) {
      const rows = CHUNK_ROWS * dim;
      this.chunks.push(this.quantized ? new Int8Array(rows) : new Float32Array(rows));
    }
    const chunk = this.chunks[c];
    if (!chunk) throw new Error(`dense chunk of slot ${slot} is already spilled`);
    const off = (slot % CHUNK_ROWS) * dim;
    if (chunk instanceof Float32Array) {
      chunk.set(v, off);
      return;
    }
    // Symmetric int8: the largest component maps to ±127.
    let max = 0;
    for (let j = 0; j < dim; j++) max = Math.max(max, Math.abs(v[j]!));
    const scale = max / 127;
    if (scale === 0) chunk.fill(0, off, off + dim);
    else for (let j = 0; j < dim; j++) chunk[off + j] = Math.round(v[j]! / scale);
    this.scales[slot] = scale;
    // Slots are only ever appended: once a chunk's last row is written, it is final.
    if (slot % CHUNK_ROWS === CHUNK_ROWS - 1) this.spillChunk(Math.floor(slot / CHUNK_ROWS));
  }

  /** Moves a full int8 chunk to the spill file, if there is one. */
  private spillChunk(c: number): void {
    const chunk = this.chunks[c];
    if (!this.spill || !(chunk instanceof Int8Array)) return;
    this.spill.write(c * CHUNK_ROWS, chunk);
    this.chunks[c] = null;
  }

  /** The int8 rows of chunk `c` (read into `buffer` when spilled). */
  int8Chunk(c: number, buffer: () => Int8Array): Int8Array {
    const chunk = this.chunks[c];
    if (chunk === null) return this.spill!.read(c * CHUNK_ROWS, buffer());
    return chunk as Int8Array;
  }

  /** Switches dense storage to int8 (once, when the organization grows past quantizeAbove). */
  private quantize(): void {
    const floats = this.chunks;
    this.chunks = floats.map(() => new Int8Array(CHUNK_ROWS * this.dimensions));
    this.quantized = true;
    for (let slot = 0; slot < this.size - 1; slot++) {
      if (!this.alive[slot]) continue;
      const off = (slot % CHUNK_ROWS) * this.dimensions;
      const chunk = floats[Math.floor(slot / CHUNK_ROWS)] as Float32Array;
      this.writeDense(slot, chunk.subarray(off, off + this.dimensions));
    }
    // Full chunks whose last row is a dead slot were not spilled by writeDense.
    for (let c = 0; (c + 1) * CHUNK_ROWS <= this.size - 1; c++) this.spillChunk(c);
  }

  private kill(slot: number): void {
    // The entry's terms are in its journal line (replacing or deleting an entry reads it).
    const indices = new Uint32Array(b64ToBytes(this.recordAt(slot).si));
    for (let i = 0; i < indices.length; i++) {
      const term = indices[i]!;
      const n = (this.df.get(term) ?? 1) - 1;
      if (n > 0) this.df.set(term, n);
      else this.df.delete(term);
    }
    this.alive[slot] = 0;
    this.ids[slot] = undefined;
    this.otherHashes.delete(slot);
    this.live--;
  }

  ensureCapacity(n: number): void {
    if (n <= this.capacity) return;
    // Doubling while small, then by a quarter: a big organization wastes little on headroom.
    const grown = this.capacity < 65_536 ? this.capacity * 2 : Math.ceil(this.capacity * 1.25);
    const capacity = Math.max(n, grown, 64);
    this.alive = grow(this.alive, new Uint8Array(capacity));
    this.updatedAt = grow(this.updatedAt, new Float64Array(capacity));
    this.hashes = grow(this.hashes, new Uint8Array(capacity * 32));
    this.refSegment = grow(this.refSegment, new Uint32Array(capacity));
    this.refOffset = grow(this.refOffset, new Float64Array(capacity));
    this.refLength = grow(this.refLength, new Uint32Array(capacity));
    this.scales = grow(this.scales, new Float32Array(capacity));
    this.scratch = new Float32Array(capacity);
    this.touched = new Int32Array(capacity);
    this.capacity = capacity;
  }
}

/** Copies `from` into the start of the larger `to`. */
function grow<T extends Uint8Array | Uint32Array | Float32Array | Float64Array>(from: T, to: T): T {
  to.set(from);
  return to;
}

function addPosting(
  postings: Map<number, Posting>,
  term: number,
  slot: number,
  weight: number,
): void {
  let p = postings.get(term);
  if (!p) {
    p = { slots: new Int32Array(4), weights: new Float32Array(4), length: 0 };
    postings.set(term, p);
  } else if (p.length === p.slots.length) {
    const size = Math.ceil(p.length * 1.5);
    const slots = new Int32Array(size);
    slots.set(p.slots);
    const weights = new Float32Array(size);
    weights.set(p.weights);
    p.slots = slots;
    p.weights = weights;
  }
  p.slots[p.length] = slot;
  p.weights[p.length] = weight;
  p.length++;
}

/** Keeps the k best (slot, score) pairs seen; a min-heap on score, ties by lower slot kept. */
class TopK {
  private readonly slots: Int32Array;
  private readonly scores: Float64Array;
  size = 0;

  constructor(private readonly k: number) {
    this.slots = new Int32Array(k);
    this.scores = new Float64Array(k);
  }

  offer(slot: number, score: number): void {
    if (this.k === 0) return;
    if (this.size < this.k) {
      let i = this.size++;
      while (i > 0) {
        const parent = (i - 1) >> 1;
        if (this.scores[parent]! <= score) break;
        this.slots[i] = this.slots[parent]!;
        this.scores[i] = this.scores[parent]!;
        i = parent;
      }
      this.slots[i] = slot;
      this.scores[i] = score;
      return;
    }
    if (score <= this.scores[0]!) return;
    let i = 0;
    for (;;) {
      const l = 2 * i + 1;
      if (l >= this.size) break;
      const r = l + 1;
      const c = r < this.size && this.scores[r]! < this.scores[l]! ? r : l;
      if (this.scores[c]! >= score) break;
      this.slots[i] = this.slots[c]!;
      this.scores[i] = this.scores[c]!;
      i = c;
    }
    this.slots[i] = slot;
    this.scores[i] = score;
  }

  result(): number[] {
    return Array.from(this.slots.subarray(0, this.size));
  }
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

export interface EmbeddedIndexOptions {
  /** DATA_DIR/knowledge */
  dir: string;
  collection: string;
  dimensions: number;
  logger?: Logger | undefined;
  /** Open an existing collection only to read it (re-indexing source). */
  readOnly?: boolean;
  exactDenseBudget?: number;
  /** Live entries of an organization above which its dense vectors are int8 (default 8,192). */
  quantizeAbove?: number;
  /**
   * Keep the full chunks of int8 vectors in a spill file under the collection directory
   * instead of in process memory (default true; read-only opens never spill).
   */
  spillVectors?: boolean;
  /** Records per journal segment file (default 16,384). */
  segmentRecords?: number;
  /** Compact at start-up when records exceed 2 × live entries + this (default 10,000). */
  compactionSlack?: number;
}

export class EmbeddedIndex implements KnowledgeIndex {
  readonly collection: string;
  private readonly dir: string;
  private orgs = new Map<string, OrgIndex>();
  private segments: Segments | undefined;
  private generation = 1;
  private initialized = false;
  private locked = false;

  constructor(private readonly options: EmbeddedIndexOptions) {
    this.collection = options.collection;
    this.dir = join(options.dir, options.collection);
  }

  async init(): Promise<void> {
    if (this.initialized) return;
    const metaPath = join(this.dir, 'meta.json');
    if (existsSync(metaPath)) {
      const meta = JSON.parse(readFileSync(metaPath, 'utf8')) as CollectionMeta;
      if (meta.dimensions !== this.options.dimensions) {
        throw new Error(
          `embedded index ${this.collection}: stored vectors have ${meta.dimensions} dimensions, not ${this.options.dimensions}`,
        );
      }
    } else if (this.options.readOnly) {
      throw new Error(`embedded index ${this.collection} does not exist`);
    } else {
      mkdirSync(this.dir, { recursive: true });
      const meta: CollectionMeta = {
        collection: this.collection,
        schema: INDEX_SCHEMA,
        dimensions: this.options.dimensions,
      };
      writeFileAtomic(metaPath, JSON.stringify(meta, null, 2) + '\n');
    }

    if (!this.options.readOnly) this.lock();
    this.disposeOrgs();
    if (this.spills()) {
      rmSync(this.spillDir(), { recursive: true, force: true });
      mkdirSync(this.spillDir(), { recursive: true });
    }
    this.generation = readGeneration(this.dir);
    this.segments?.close();
    const segments = new Segments(this.generationDir(), this.options.readOnly === true);
    this.segments = segments;
    const numbers = listSegments(this.generationDir());
    let records = 0;
    let appendTo: { segment: number; records: number } | undefined;
    for (const segment of numbers) {
      const path = join(this.generationDir(), segmentName(segment));
      // A crash mid-write leaves a torn last line. It is cut off, and the segment is not
      // appended to again (writes go to a fresh segment), as before.
      const torn = endsTorn(path);
      const n = segments.replay(segment, (record, ref) => this.apply(record, ref));
      records += n;
      appendTo =
        segment === numbers[numbers.length - 1] && !torn ? { segment, records: n } : undefined;
      if (torn)
        this.options.logger?.warn(
          { collection: this.collection, segment: path },
          'ignored a torn last record',
        );
    }
    const last = numbers[numbers.length - 1] ?? 0;
    for (const [orgId, org] of this.orgs) if (org.needsCompaction()) this.compactOrg(orgId, org);

    const live = this.liveCount();
    const slack = this.options.compactionSlack ?? 10_000;
    if (!this.options.readOnly) {
      if (records > 2 * live + slack) this.compactJournal(records, live);
      else if (appendTo) segments.resume(appendTo.segment, appendTo.records);
      else segments.rotate(last + 1);
    }
    this.initialized = true;
    this.options.logger?.info(
      { collection: this.collection, entries: live, records },
      'embedded index loaded',
    );
  }

  async upsert(orgId: string, entries: IndexedEntry[]): Promise<WriteOutcome[]> {
    this.assertWritable();
    const records: PutRecord[] = entries.map((e) => {
      if (e.dense.length !== this.options.dimensions) {
        throw new Error(
          `vector of ${e.dense.length} dimensions for a ${this.options.dimensions}-dimension index`,
        );
      }
      return toPutRecord(orgId, e);
    });
    const refs = this.append(records);
    return records.map(
      (r, i) => this.apply(r, refs[i]!, entries[i]!.dense, entries[i]!.sparse) as WriteOutcome,
    );
  }

  async versions(orgId: string, ids: string[]): Promise<Map<string, EntryVersion>> {
    const out = new Map<string, EntryVersion>();
    const org = this.orgs.get(orgId);
    if (!org) return out;
    for (const id of ids) {
      const slot = org.slotOf.get(id);
      if (slot !== undefined)
        out.set(id, { contentHash: org.contentHashOf(slot), updatedAt: org.updatedAt[slot]! });
    }
    return out;
  }

  async delete(orgId: string, ids: string[]): Promise<number> {
    this.assertWritable();
    const org = this.orgs.get(orgId);
    const existing = org ? ids.filter((id) => org.slotOf.has(id)) : [];
    if (existing.length === 0) return 0;
    const record: DeleteRecord = { t: 'del', o: orgId, ids: existing };
    const [ref] = this.append([record]);
    this.apply(record, ref!);
    return existing.length;
  }

  async count(orgId: string): Promise<number> {
    return this.orgs.get(orgId)?.live ?? 0;
  }

  async candidates(query: CandidateQuery): Promise<CandidateSet> {
    const org = this.orgs.get(query.orgId);
    const documentFrequency = new Map<number, number>();
    if (!org || org.live === 0) return { docCount: 0, documentFrequency, candidates: [] };
    for (const t of query.terms) documentFrequency.set(t.id, org.df.get(t.id) ?? 0);

    const chosen = new Set<number>();
    for (const slot of this.lexicalTop(org, query)) chosen.add(slot);
    const budget = this.options.exactDenseBudget ?? DEFAULT_EXACT_DENSE_BUDGET;
    if (query.dense && org.live * org.dimensions <= budget) {
      for (const slot of this.denseTop(org, query.dense, query.limit)) chosen.add(slot);
    }

    const candidates: Candidate[] = [];
    const termIds = [...new Set(query.terms.map((t) => t.id))].sort((a, b) => a - b);
    for (const slot of chosen) {
      candidates.push({
        entry: org.entryAt(slot),
        dense: org.denseOf(slot),
        // The entry's weights for the query's terms: all that lexical scoring reads.
        sparse: org.sparseFor(slot, termIds),
      });
    }
    return { docCount: org.live, documentFrequency, candidates };
  }

  async listOrgs(): Promise<string[]> {
    return [...this.orgs.entries()]
      .filter(([, org]) => org.live > 0)
      .map(([id]) => id)
      .sort(compareIds);
  }

  async scroll(orgId: string, after: string | undefined, limit: number): Promise<EntryPage> {
    const org = this.orgs.get(orgId);
    if (!org) return { entries: [] };
    const ids = org.ids_();
    let start = 0;
    if (after !== undefined) {
      // First id strictly after `after` (binary search in code-unit order).
      let lo = 0;
      let hi = ids.length;
      while (lo < hi) {
        const mid = (lo + hi) >> 1;
        if (compareIds(ids[mid]!, after) <= 0) lo = mid + 1;
        else hi = mid;
      }
      start = lo;
    }
    const page = ids.slice(start, start + limit);
    const entries = page.map((id) => org.storedEntryAt(org.slotOf.get(id)!));
    return start + limit < ids.length && page.length > 0
      ? { entries, next: page[page.length - 1]! }
      : { entries };
  }

  async close(): Promise<void> {
    this.segments?.close();
    this.segments = undefined;
    this.disposeOrgs();
    this.unlock();
    this.initialized = false;
  }

  /**
   * One writer per collection directory: a second process (say, the re-index command
   * while the service runs) would append to the journal behind the first one's back.
   */
  private lock(): void {
    const path = join(this.dir, 'LOCK');
    if (existsSync(path)) {
      const pid = Number(readFileSync(path, 'utf8').trim());
      if (Number.isInteger(pid) && pid > 0 && pid !== process.pid && isAlive(pid)) {
        throw new Error(
          `embedded index ${this.collection} is in use by process ${pid} (stop it first)`,
        );
      }
    }
    writeFileAtomic(path, `${process.pid}\n`);
    this.locked = true;
  }

  private unlock(): void {
    if (!this.locked) return;
    this.locked = false;
    const path = join(this.dir, 'LOCK');
    try {
      if (readFileSync(path, 'utf8').trim() === String(process.pid)) rmSync(path, { force: true });
    } catch {
      // Already gone.
    }
  }

  /** Best lexical matches: BM25 accumulated over the postings of the query terms. */
  private lexicalTop(org: OrgIndex, query: CandidateQuery): number[] {
    const scores = org.scratch;
    const touched = org.touched;
    const alive = org.alive;
    let n = 0;
    for (const t of query.terms) {
      const posting = org.postings.get(t.id);
      if (!posting) continue;
      const weight = t.count * idf(org.live, org.df.get(t.id) ?? 0);
      const { slots, weights, length } = posting;
      for (let i = 0; i < length; i++) {
        const slot = slots[i]!;
        if (alive[slot] === 0) continue;
        if (scores[slot] === 0) touched[n++] = slot;
        scores[slot]! += weight * weights[i]!;
      }
    }
    const top = new TopK(query.limit);
    for (let i = 0; i < n; i++) {
      const slot = touched[i]!;
      top.offer(slot, scores[slot]!);
      scores[slot] = 0;
    }
    return top.result();
  }

  /**
   * Exact dense nearest neighbours by brute force (only for small organizations). Only the
   * query's non-zero dimensions are visited: the built-in embeddings of a short query touch
   * a fraction of them, so this is several times cheaper than a full dot product per entry.
   */
  private denseTop(org: OrgIndex, q: Float32Array, k: number): number[] {
    const dim = org.dimensions;
    let nnz = 0;
    const idx = new Int32Array(dim);
    const val = new Float32Array(dim);
    for (let j = 0; j < dim; j++) {
      if (q[j] === 0) continue;
      idx[nnz] = j;
      val[nnz++] = q[j]!;
    }
    const top = new TopK(k);
    const { alive, scales, quantized } = org;
    let buffer: Int8Array | undefined;
    const spillBuffer = () => (buffer ??= new Int8Array(CHUNK_ROWS * dim));
    for (let c = 0; c < org.chunks.length; c++) {
      const rows = org.chunks[c] ?? org.int8Chunk(c, spillBuffer);
      const first = c * CHUNK_ROWS;
      const last = Math.min(org.size, first + CHUNK_ROWS);
      for (let slot = first, off = 0; slot < last; slot++, off += dim) {
        if (alive[slot] === 0) continue;
        let s0 = 0;
        let s1 = 0;
        let i = 0;
        for (; i + 1 < nnz; i += 2) {
          s0 += val[i]! * rows[off + idx[i]!]!;
          s1 += val[i + 1]! * rows[off + idx[i + 1]!]!;
        }
        if (i < nnz) s0 += val[i]! * rows[off + idx[i]!]!;
        top.offer(slot, quantized ? (s0 + s1) * scales[slot]! : s0 + s1);
      }
    }
    return top.result();
  }

  /** Applies a journal record stored at `ref`; `dense`/`sparse` save decoding them again. */
  private apply(
    record: JournalRecord,
    ref: LineRef,
    dense?: Float32Array,
    sparse?: SparseVector,
  ): WriteOutcome | number {
    let org = this.orgs.get(record.o);
    if (record.t === 'del') {
      if (!org) return 0;
      let n = 0;
      for (const id of record.ids) if (org.remove(id)) n++;
      if (org.needsCompaction()) this.compactOrg(record.o, org);
      return n;
    }
    if (!org) {
      const segments = this.segments!;
      org = new OrgIndex(
        this.options.dimensions,
        this.options.quantizeAbove ?? DEFAULT_QUANTIZE_ABOVE,
        (r) => segments.read(r),
        this.newSpill(),
      );
      this.orgs.set(record.o, org);
    }
    const vector = dense ?? new Float32Array(b64ToBytes(record.d));
    if (vector.length !== this.options.dimensions) {
      throw new Error(`embedded index ${this.collection}: record of ${vector.length} dimensions`);
    }
    const outcome = org.put(record, ref, vector, sparse);
    if (org.needsCompaction()) this.compactOrg(record.o, org);
    return outcome;
  }

  /** Writes and fsyncs records before they are applied, so an acknowledged write survives a crash. */
  private append(records: JournalRecord[]): LineRef[] {
    if (records.length === 0) return [];
    const segments = this.segments!;
    if (!segments.writing || segments.records >= (this.options.segmentRecords ?? SEGMENT_RECORDS))
      segments.rotate(segments.segment + 1);
    return segments.append(records);
  }

  /**
   * Rewrites the journal with live entries only (their lines as written), into a new
   * generation directory; switching CURRENT (atomic rename) commits it, then the old
   * generation is removed.
   */
  private compactJournal(records: number, live: number): void {
    const old = this.segments!;
    const oldDir = this.generationDir();
    this.generation++;
    const newDir = this.generationDir();
    rmSync(newDir, { recursive: true, force: true });
    mkdirSync(newDir, { recursive: true });
    const fresh = new Segments(newDir, false);
    fresh.rotate(1);
    const segmentRecords = this.options.segmentRecords ?? SEGMENT_RECORDS;
    const rebuilt = new Map<string, OrgIndex>();
    for (const [orgId, org] of this.orgs) {
      const next = new OrgIndex(
        org.dimensions,
        org.quantizeAbove,
        (r) => fresh.read(r),
        this.newSpill(),
      );
      next.ensureCapacity(org.live);
      const ids = org.ids_();
      for (let i = 0; i < ids.length; i += 1024) {
        const slots = ids.slice(i, i + 1024).map((id) => org.slotOf.get(id)!);
        const batch = slots.map((slot) => org.recordAt(slot));
        if (fresh.records >= segmentRecords) fresh.rotate(fresh.segment + 1);
        const refs = fresh.append(batch);
        batch.forEach((r, j) => next.put(r, refs[j]!, org.denseOf(slots[j]!)));
      }
      rebuilt.set(orgId, next);
    }
    old.close();
    this.segments = fresh;
    this.disposeOrgs();
    this.orgs = rebuilt;
    writeFileAtomic(join(this.dir, 'CURRENT'), `${generationName(this.generation)}\n`);
    rmSync(oldDir, { recursive: true, force: true });
    this.options.logger?.info(
      { collection: this.collection, records, live },
      'embedded index journal compacted',
    );
  }

  private spills(): boolean {
    return this.options.spillVectors !== false && this.options.readOnly !== true;
  }

  private spillDir(): string {
    return join(this.dir, 'vectors');
  }

  private spillSerial = 0;

  /** A spill file for a new organization index (none when spilling is off). */
  private newSpill(): VectorSpill | undefined {
    if (!this.spills()) return undefined;
    return new VectorSpill(
      join(this.spillDir(), `${++this.spillSerial}.i8`),
      this.options.dimensions,
    );
  }

  /** Replaces an organization's index by its compacted copy. */
  private compactOrg(orgId: string, org: OrgIndex): void {
    this.orgs.set(orgId, org.compacted(this.newSpill()));
    org.dispose();
  }

  private disposeOrgs(): void {
    for (const org of this.orgs.values()) org.dispose();
    this.orgs.clear();
  }

  private generationDir(): string {
    return join(this.dir, generationName(this.generation));
  }

  private liveCount(): number {
    let n = 0;
    for (const org of this.orgs.values()) n += org.live;
    return n;
  }

  private assertWritable(): void {
    if (this.options.readOnly)
      throw new Error(`embedded index ${this.collection} is open read-only`);
    if (!this.initialized) throw new Error(`embedded index ${this.collection} is not initialized`);
  }
}

function toPutRecord(orgId: string, e: IndexedEntry): PutRecord {
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

/** Non-empty and not ending in a newline: the last record was cut short. */
function endsTorn(path: string): boolean {
  let fd: number | undefined;
  try {
    fd = openSync(path, 'r');
    const size = fstatSync(fd).size;
    if (size === 0) return false;
    const last = Buffer.alloc(1);
    readSync(fd, last, 0, 1, size - 1);
    return last[0] !== 0x0a;
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

const generationName = (n: number) => `gen-${String(n).padStart(6, '0')}`;
const segmentName = (n: number) => `segment-${String(n).padStart(6, '0')}.jsonl`;

function readGeneration(dir: string): number {
  const path = join(dir, 'CURRENT');
  if (!existsSync(path)) return 1;
  const match = /^gen-(\d+)$/.exec(readFileSync(path, 'utf8').trim());
  if (!match) throw new Error(`unreadable ${path}`);
  return Number(match[1]);
}

function listSegments(dir: string): number[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir)
    .map((name) => /^segment-(\d+)\.jsonl$/.exec(name))
    .filter((m): m is RegExpExecArray => m !== null)
    .map((m) => Number(m[1]))
    .sort((a, b) => a - b);
}

/** Write to a temp file, fsync, rename over the target. */
function writeFileAtomic(path: string, content: string): void {
  const tmp = `${path}.tmp`;
  writeFileSync(tmp, content);
  const fd = openSync(tmp, 'r+');
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  renameSync(tmp, path);
}

/** Collections of the embedded backend: the directories under DATA_DIR/knowledge. */
export class EmbeddedCatalog implements IndexCatalog {
  constructor(
    private readonly dir: string,
    private readonly prefix: string,
    private readonly logger?: Logger,
  ) {}

  async list(): Promise<string[]> {
    if (!existsSync(this.dir)) return [];
    return readdirSync(this.dir, { withFileTypes: true })
      .filter(
        (d) =>
          d.isDirectory() &&
          isCollectionOf(this.prefix, d.name) &&
          existsSync(join(this.dir, d.name, 'meta.json')),
      )
      .map((d) => d.name)
      .sort();
  }

  async openForRead(collection: string): Promise<KnowledgeIndex> {
    const meta = JSON.parse(
      readFileSync(join(this.dir, collection, 'meta.json'), 'utf8'),
    ) as CollectionMeta;
    const index = new EmbeddedIndex({
      dir: this.dir,
      collection,
      dimensions: meta.dimensions,
      readOnly: true,
      logger: this.logger,
    });
    await index.init();
    return index;
  }

  async drop(collection: string): Promise<void> {
    if (!isCollectionOf(this.prefix, collection))
      throw new Error(`not a collection of prefix ${this.prefix}: ${collection}`);
    rmSync(join(this.dir, collection), { recursive: true, force: true });
  }
}
