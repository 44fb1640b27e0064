import {
  existsSync,
  fstatSync,
  readSync,
  mkdirSync,
  readFileSync,
  readdirSync,
  renameSync,
  rmSync,
  writeFileSync,
  openSync,
  fsyncSync,
  closeSync,
} from 'node:fs';
import { join } from 'node:path';
import { JsonlJournal, type Logger } from '@support-agent/shared';
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
  StoredEntry,
  WriteOutcome,
} from '../domain/ports.js';
import { compareIds, idf } from '../domain/scoring.js';

/**
 * The in-process index used by `npm start`: the same hybrid candidates as Qdrant
 * (BM25 over an inverted index + dense cosine) with everything in memory, persisted
 * as an fsynced JSON-lines journal under DATA_DIR/knowledge/<collection>/.
 *
 * Speed at 100k entries per organization comes from the inverted index: only
 * entries sharing a term with the query are touched, and only the best of those
 * are rescored densely. Dense vectors live in one Float32Array per organization.
 * Small organizations (entries × dimensions within `exactDenseBudget`) also get an
 * exact brute-force dense pass, so purely semantic matches are found too.
 */

/** Records per journal segment: bounds the size of each file read at start-up. */
const SEGMENT_RECORDS = 16_384;
/** Multiply-adds of a brute-force dense pass allowed per query (≈4 ms). */
export const DEFAULT_EXACT_DENSE_BUDGET = 4_000_000;

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

/** One organization's entries: slots are append-only until the org is compacted. */
class OrgIndex {
  size = 0;
  live = 0;
  capacity = 0;
  entries: (StoredEntry | undefined)[] = [];
  alive = new Uint8Array(0);
  dense = new Float32Array(0);
  sparseIndices: Uint32Array[] = [];
  sparseValues: Float32Array[] = [];
  readonly slotOf = new Map<string, number>();
  readonly postings = new Map<number, Posting>();
  readonly df = new Map<number, number>();
  /** Scratch accumulator for lexical scores, reset after each query. */
  scratch = new Float32Array(0);
  private sortedIds: string[] | undefined;

  constructor(readonly dimensions: number) {}

  put(
    entry: StoredEntry,
    dense: Float32Array,
    indices: Uint32Array,
    values: Float32Array,
  ): WriteOutcome {
    const previous = this.slotOf.get(entry.id);
    if (previous !== undefined) this.kill(previous);
    else this.sortedIds = undefined;
    const slot = this.size++;
    this.ensureCapacity(this.size);
    this.entries[slot] = entry;
    this.alive[slot] = 1;
    this.dense.set(dense, slot * this.dimensions);
    this.sparseIndices[slot] = indices;
    this.sparseValues[slot] = values;
    for (let i = 0; i < indices.length; i++) {
      const term = indices[i]!;
      this.df.set(term, (this.df.get(term) ?? 0) + 1);
      addPosting(this.postings, term, slot, values[i]!);
    }
    this.slotOf.set(entry.id, slot);
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

  /** Rebuilds arrays and postings from the live slots. */
  compacted(): OrgIndex {
    const fresh = new OrgIndex(this.dimensions);
    fresh.ensureCapacity(this.live);
    for (let slot = 0; slot < this.size; slot++) {
      if (!this.alive[slot]) continue;
      const d = this.dense.subarray(slot * this.dimensions, (slot + 1) * this.dimensions);
      fresh.put(this.entries[slot]!, d, this.sparseIndices[slot]!, this.sparseValues[slot]!);
    }
    return fresh;
  }

  ids(): string[] {
    this.sortedIds ??= [...this.slotOf.keys()].sort(compareIds);
    return this.sortedIds;
  }

  denseOf(slot: number): Float32Array {
    return this.dense.subarray(slot * this.dimensions, (slot + 1) * this.dimensions);
  }

  private kill(slot: number): void {
    this.alive[slot] = 0;
    this.entries[slot] = undefined;
    const indices = this.sparseIndices[slot]!;
    for (let i = 0; i < indices.length; i++) {
      const term = indices[i]!;
      const n = (this.df.get(term) ?? 1) - 1;
      if (n > 0) this.df.set(term, n);
      else this.df.delete(term);
    }
    this.live--;
  }

  private ensureCapacity(n: number): void {
    if (n <= this.capacity) return;
    const capacity = Math.max(n, this.capacity * 2, 64);
    const dense = new Float32Array(capacity * this.dimensions);
    dense.set(this.dense.subarray(0, this.size * this.dimensions));
    const alive = new Uint8Array(capacity);
    alive.set(this.alive);
    this.dense = dense;
    this.alive = alive;
    this.scratch = new Float32Array(capacity);
    this.capacity = capacity;
  }
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
    const slots = new Int32Array(p.length * 2);
    slots.set(p.slots);
    const weights = new Float32Array(p.length * 2);
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
  /** Records per journal segment file (default 16,384). */
  segmentRecords?: number;
  /** Compact at start-up when records exceed 2 × live entries + this (default 10,000). */
  compactionSlack?: number;
}

export class EmbeddedIndex implements KnowledgeIndex {
  readonly collection: string;
  private readonly dir: string;
  private readonly orgs = new Map<string, OrgIndex>();
  private journal: JsonlJournal<JournalRecord> | undefined;
  private segment = 0;
  private segmentRecords = 0;
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
    this.orgs.clear();
    this.generation = readGeneration(this.dir);
    const segments = listSegments(this.generationDir());
    let records = 0;
    for (const segment of segments) {
      const path = join(this.generationDir(), segmentName(segment));
      // A crash mid-write leaves a torn last line. JsonlJournal skips it but keeps it in
      // the file, so appending after it would turn it into a corrupt middle line: such a
      // segment is never appended to again; writes go to a fresh segment.
      const torn = endsTorn(path);
      const journal = new JsonlJournal<JournalRecord>(path);
      const n = journal.replay((record) => this.apply(record));
      records += n;
      this.segment = segment;
      if (segment === segments[segments.length - 1] && !this.options.readOnly && !torn) {
        this.journal = journal;
        this.segmentRecords = n;
      } else {
        journal.close();
      }
      if (torn)
        this.options.logger?.warn(
          { collection: this.collection, segment: path },
          'ignored a torn last record',
        );
    }
    for (const [orgId, org] of this.orgs)
      if (org.needsCompaction()) this.orgs.set(orgId, org.compacted());

    const live = this.liveCount();
    const slack = this.options.compactionSlack ?? 10_000;
    if (!this.options.readOnly && records > 2 * live + slack) this.compactJournal(records, live);
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
    this.append(records);
    return records.map((r) => this.apply(r) as WriteOutcome);
  }

  async versions(orgId: string, ids: string[]): Promise<Map<string, EntryVersion>> {
    const out = new Map<string, EntryVersion>();
    const org = this.orgs.get(orgId);
    if (!org) return out;
    for (const id of ids) {
      const slot = org.slotOf.get(id);
      const entry = slot === undefined ? undefined : org.entries[slot];
      if (entry) out.set(id, { contentHash: entry.contentHash, updatedAt: entry.updatedAt });
    }
    return out;
  }

  async delete(orgId: string, ids: string[]): Promise<number> {
    this.assertWritable();
    const org = this.orgs.get(orgId);
    const existing = org ? ids.filter((id) => org.slotOf.has(id)) : [];
    if (existing.length === 0) return 0;
    const record: DeleteRecord = { t: 'del', o: orgId, ids: existing };
    this.append([record]);
    this.apply(record);
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
    for (const slot of chosen) {
      candidates.push({
        entry: org.entries[slot]!,
        dense: org.denseOf(slot),
        sparse: { indices: org.sparseIndices[slot]!, values: org.sparseValues[slot]! },
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
    const ids = org.ids();
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
    const entries = page.map((id) => org.entries[org.slotOf.get(id)!]!);
    return start + limit < ids.length && page.length > 0
      ? { entries, next: page[page.length - 1]! }
      : { entries };
  }

  async close(): Promise<void> {
    this.closeJournal();
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

  private closeJournal(): void {
    this.journal?.close();
    this.journal = undefined;
  }

  /** Best lexical matches: BM25 accumulated over the postings of the query terms. */
  private lexicalTop(org: OrgIndex, query: CandidateQuery): number[] {
    const scores = org.scratch;
    const touched: number[] = [];
    for (const t of query.terms) {
      const posting = org.postings.get(t.id);
      if (!posting) continue;
      const weight = t.count * idf(org.live, org.df.get(t.id) ?? 0);
      const { slots, weights, length } = posting;
      for (let i = 0; i < length; i++) {
        const slot = slots[i]!;
        if (org.alive[slot] === 0) continue;
        if (scores[slot] === 0) touched.push(slot);
        scores[slot]! += weight * weights[i]!;
      }
    }
    const top = new TopK(query.limit);
    for (const slot of touched) {
      top.offer(slot, scores[slot]!);
      scores[slot] = 0;
    }
    return top.result();
  }

  /** Exact dense nearest neighbours by brute force (only for small organizations). */
  private denseTop(org: OrgIndex, q: Float32Array, k: number): number[] {
    const dim = org.dimensions;
    const dense = org.dense;
    const top = new TopK(k);
    for (let slot = 0, off = 0; slot < org.size; slot++, off += dim) {
      if (org.alive[slot] === 0) continue;
      let s0 = 0;
      let s1 = 0;
      let j = 0;
      for (; j + 1 < dim; j += 2) {
        s0 += q[j]! * dense[off + j]!;
        s1 += q[j + 1]! * dense[off + j + 1]!;
      }
      if (j < dim) s0 += q[j]! * dense[off + j]!;
      top.offer(slot, s0 + s1);
    }
    return top.result();
  }

  private apply(record: JournalRecord): WriteOutcome | number {
    let org = this.orgs.get(record.o);
    if (record.t === 'del') {
      if (!org) return 0;
      let n = 0;
      for (const id of record.ids) if (org.remove(id)) n++;
      if (org.needsCompaction()) this.orgs.set(record.o, org.compacted());
      return n;
    }
    if (!org) {
      org = new OrgIndex(this.options.dimensions);
      this.orgs.set(record.o, org);
    }
    const dense = new Float32Array(b64ToBytes(record.d));
    if (dense.length !== this.options.dimensions) {
      throw new Error(`embedded index ${this.collection}: record of ${dense.length} dimensions`);
    }
    const entry: StoredEntry = {
      id: record.id,
      question: record.q,
      answer: record.a,
      tags: record.g,
      updatedAt: record.u,
      contentHash: record.h,
    };
    const outcome = org.put(
      entry,
      dense,
      new Uint32Array(b64ToBytes(record.si)),
      new Float32Array(b64ToBytes(record.sv)),
    );
    if (org.needsCompaction()) this.orgs.set(record.o, org.compacted());
    return outcome;
  }

  /** Writes and fsyncs records before they are applied, so an acknowledged write survives a crash. */
  private append(records: JournalRecord[]): void {
    if (records.length === 0) return;
    if (!this.journal || this.segmentRecords >= (this.options.segmentRecords ?? SEGMENT_RECORDS)) {
      this.rotate();
    }
    this.journal!.appendMany(records);
    this.segmentRecords += records.length;
  }

  private rotate(): void {
    this.journal?.close();
    this.segment++;
    this.segmentRecords = 0;
    mkdirSync(this.generationDir(), { recursive: true });
    this.journal = new JsonlJournal<JournalRecord>(
      join(this.generationDir(), segmentName(this.segment)),
    );
  }

  /**
   * Rewrites the journal with live entries only, into a new generation directory;
   * switching CURRENT (atomic rename) commits it, then the old generation is removed.
   */
  private compactJournal(records: number, live: number): void {
    this.closeJournal();
    const oldDir = this.generationDir();
    this.generation++;
    const newDir = this.generationDir();
    rmSync(newDir, { recursive: true, force: true });
    mkdirSync(newDir, { recursive: true });
    this.segment = 0;
    this.segmentRecords = 0;
    for (const [orgId, org] of this.orgs) {
      const batch: PutRecord[] = [];
      for (const id of org.ids()) {
        const slot = org.slotOf.get(id)!;
        const e = org.entries[slot]!;
        batch.push({
          t: 'put',
          o: orgId,
          id: e.id,
          q: e.question,
          a: e.answer,
          g: e.tags,
          u: e.updatedAt,
          h: e.contentHash,
          d: f32ToB64(org.denseOf(slot)),
          si: u32ToB64(org.sparseIndices[slot]!),
          sv: f32ToB64(org.sparseValues[slot]!),
        });
        if (batch.length >= 1024) this.append(batch.splice(0));
      }
      this.append(batch);
    }
    this.closeJournal();
    writeFileAtomic(join(this.dir, 'CURRENT'), `${generationName(this.generation)}\n`);
    rmSync(oldDir, { recursive: true, force: true });
    this.options.logger?.info(
      { collection: this.collection, records, live },
      'embedded index journal compacted',
    );
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
