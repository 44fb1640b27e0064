import { existsSync, readdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { TimeSlicer, type Logger, type SegmentLine } from '@support-agent/shared';
import { isCollectionOf } from '../../domain/fingerprint.js';
import type {
  CandidateQuery,
  CandidateSet,
  EntryPage,
  EntryVersion,
  IndexCatalog,
  IndexedEntry,
  KnowledgeIndex,
  SparseVector,
  WriteOutcome,
} from '../../domain/ports.js';
import { compareIds } from '../../domain/scoring.js';
import { candidatesOf } from './candidates.js';
import { SpillFiles } from './dense-store.js';
import { OrgIndex } from './org-index.js';
import { CollectionFiles, readMeta, SEGMENT_RECORDS } from './persistence.js';
import {
  denseOfRecord,
  toPutRecord,
  type DeleteRecord,
  type JournalRecord,
  type PutRecord,
} from './records.js';
import { JournalReader } from './journal-reader.js';

/**
 * The in-process index used by `npm start`: the same hybrid candidates as Qdrant
 * (BM25 over an inverted index + dense cosine, candidates.ts), persisted as fsynced
 * JSON-lines journal segments under DATA_DIR/knowledge/<collection>/ (persistence.ts,
 * records.ts).
 *
 * Speed at 100k entries per organization comes from the inverted index (postings.ts): only
 * entries sharing a term with the query are touched, and only the best of those are rescored
 * densely. Memory (what limits an in-process index): what search needs per entry is in a few
 * large typed arrays per organization (org-index.ts; dense vectors in dense-store.ts, spilled
 * to a file once an organization is large); text, tags and an entry's sparse vector stay in
 * the journal and are read back by position for the few results a search returns.
 */

/** Multiply-adds of a brute-force dense pass allowed per query (≈4 ms). */
export const DEFAULT_EXACT_DENSE_BUDGET = 4_000_000;
/**
 * Organizations with more entries keep their dense vectors as int8 (a quarter of the memory;
 * cosines within ~1e-3 of float32). Small ones keep float32: exact, and cheap anyway.
 */
export const DEFAULT_QUANTIZE_ABOVE = 8_192;

export interface EmbeddedIndexOptions {
  /** DATA_DIR/knowledge */
  dir: string;
  collection: string;
  dimensions: number;
  logger?: Logger | undefined;
  /** Open an existing collection only to read it (re-indexing source). */
  readOnly?: boolean;
  exactDenseBudget?: number;
  /**
   * Queries whose terms have at most this many postings in all add them all up; others are
   * ranked with MaxScore pruning (default 8,192; lexical-top.ts). Either gives the same top k.
   */
  lexicalAccumulateUpTo?: number;
  /** Live entries of an organization above which its dense vectors are int8 (default 8,192). */
  quantizeAbove?: number;
  /**
   * Keep the full chunks of int8 vectors in a spill file under the collection directory
   * instead of in process memory (default true; read-only opens never spill).
   */
  spillVectors?: boolean;
  /**
   * Bytes of entry text (search results) kept in memory per collection, least recently used
   * out first (default 4 MiB; 0 reads every result from the journal).
   */
  textCacheBytes?: number;
  /** Records per journal segment file (default 16,384). */
  segmentRecords?: number;
  /** Compact at start-up when records exceed 2 × live entries + this (default 10,000). */
  compactionSlack?: number;
}

export class EmbeddedIndex implements KnowledgeIndex {
  readonly collection: string;
  private readonly files: CollectionFiles;
  private readonly spills: SpillFiles;
  private orgs = new Map<string, OrgIndex>();
  /** Reads records back from the journal in use (each organization keeps the one it was built on). */
  private reader = new JournalReader(() => {
    throw new Error(`embedded index ${this.collection} is not open`);
  }, 0);
  private initialized = false;

  constructor(private readonly options: EmbeddedIndexOptions) {
    this.collection = options.collection;
    const dir = join(options.dir, options.collection);
    const readOnly = options.readOnly === true;
    this.files = new CollectionFiles(dir, options.collection, {
      readOnly,
      segmentRecords: options.segmentRecords ?? SEGMENT_RECORDS,
    });
    this.spills = new SpillFiles(
      join(dir, 'vectors'),
      options.dimensions,
      options.spillVectors !== false && !readOnly,
    );
  }

  async init(): Promise<void> {
    if (this.initialized) return;
    const readOnly = this.options.readOnly === true;
    this.files.openMeta(this.options.dimensions);
    if (!readOnly) this.files.lock();
    try {
      this.disposeOrgs();
      this.spills.reset();
      const journal = this.files.openJournal();
      this.reader = this.journalReader((at) => journal.readBytes(at));
      const records = journal.replay(
        (record, at) => this.apply(record, at),
        (segment) =>
          this.options.logger?.warn(
            { collection: this.collection, segment },
            'ignored a torn last record',
          ),
      );
      for (const [orgId, org] of this.orgs) if (org.needsCompaction()) this.compactOrg(orgId, org);

      const live = this.liveCount();
      const slack = this.options.compactionSlack ?? 10_000;
      if (!readOnly) {
        if (records > 2 * live + slack) this.compactJournal(records, live);
        else journal.startAppending();
      }
      this.initialized = true;
      this.options.logger?.info(
        { collection: this.collection, entries: live, records },
        'embedded index loaded',
      );
    } catch (err) {
      this.files.close();
      this.disposeOrgs();
      throw err;
    }
  }

  /**
   * Runs writes one at a time, in call order: a write applies its records in time slices, and
   * the next one must not apply its own in between (the index must end as the journal reads).
   */
  private serialized<T>(write: () => Promise<T>): Promise<T> {
    const run = this.writes.then(write);
    this.writes = run.catch(() => undefined);
    return run;
  }

  private writes: Promise<unknown> = Promise.resolve();

  async upsert(orgId: string, entries: IndexedEntry[]): Promise<WriteOutcome[]> {
    this.assertWritable();
    return this.serialized(() => this.upsertNow(orgId, entries));
  }

  private async upsertNow(orgId: string, entries: IndexedEntry[]): Promise<WriteOutcome[]> {
    this.assertWritable();
    const records: PutRecord[] = entries.map((e) => {
      if (e.dense.length !== this.options.dimensions) {
        throw new Error(
          `vector of ${e.dense.length} dimensions for a ${this.options.dimensions}-dimension index`,
        );
      }
      return toPutRecord(orgId, e);
    });
    // Written and fsynced before they are applied: an acknowledged write survives a crash.
    // Off the event loop (thread pool): searches are served while a large batch is written.
    const at = await this.files.journal.appendManyAsync(records);
    // Applied in time slices (TimeSlicer): other organizations' searches run in between, each
    // seeing the entries applied before it, as between two batches.
    const slicer = new TimeSlicer();
    const outcomes: WriteOutcome[] = [];
    for (let i = 0; i < records.length; i++) {
      await slicer.next();
      const entry = entries[i]!;
      outcomes.push(this.apply(records[i]!, at[i]!, entry.dense, entry.sparse) as WriteOutcome);
    }
    return outcomes;
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
    return this.serialized(async () => this.deleteNow(orgId, ids));
  }

  private deleteNow(orgId: string, ids: string[]): number {
    this.assertWritable();
    const org = this.orgs.get(orgId);
    const existing = org ? ids.filter((id) => org.slotOf.has(id)) : [];
    if (existing.length === 0) return 0;
    const record: DeleteRecord = { t: 'del', o: orgId, ids: existing };
    const [at] = this.files.journal.appendMany([record]);
    this.apply(record, at!);
    return existing.length;
  }

  async count(orgId: string): Promise<number> {
    return this.orgs.get(orgId)?.live ?? 0;
  }

  async candidates(query: CandidateQuery): Promise<CandidateSet> {
    return candidatesOf(
      this.orgs.get(query.orgId),
      query,
      this.options.exactDenseBudget ?? DEFAULT_EXACT_DENSE_BUDGET,
      this.options.lexicalAccumulateUpTo,
    );
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
    const ids = org.idsInOrder();
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
    await this.writes; // writes in flight finish first
    this.files.close();
    this.disposeOrgs();
    this.initialized = false;
  }

  /** Applies a journal record whose line is at `at`; `dense`/`sparse` save decoding them again. */
  private apply(
    record: JournalRecord,
    at: SegmentLine,
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
      org = this.newOrg(this.reader);
      this.orgs.set(record.o, org);
    }
    const vector = dense ?? denseOfRecord(record);
    if (vector.length !== this.options.dimensions) {
      throw new Error(`embedded index ${this.collection}: record of ${vector.length} dimensions`);
    }
    const outcome = org.put(record, at, vector, sparse);
    if (org.needsCompaction()) this.compactOrg(record.o, org);
    return outcome;
  }

  private journalReader(line: (at: SegmentLine) => Buffer): JournalReader {
    return new JournalReader(line, this.options.textCacheBytes);
  }

  private newOrg(reader: JournalReader): OrgIndex {
    return new OrgIndex(
      this.options.dimensions,
      this.options.quantizeAbove ?? DEFAULT_QUANTIZE_ABOVE,
      reader,
      this.spills.next(),
    );
  }

  /**
   * Rewrites the journal with live entries only (their lines as written, organization by
   * organization in id order) into the next generation, and rebuilds the organizations on it.
   */
  private compactJournal(records: number, live: number): void {
    const fresh = this.files.nextGeneration();
    const reader = this.journalReader((at) => fresh.readBytes(at));
    const rebuilt = new Map<string, OrgIndex>();
    for (const [orgId, org] of this.orgs) {
      const next = this.newOrg(reader);
      next.ensureCapacity(org.live);
      const ids = org.idsInOrder();
      for (let i = 0; i < ids.length; i += 1024) {
        const slots = ids.slice(i, i + 1024).map((id) => org.slotOf.get(id)!);
        const batch = slots.map((slot) => org.recordAt(slot));
        const at = fresh.appendMany(batch);
        batch.forEach((r, j) => next.put(r, at[j]!, org.denseOf(slots[j]!)));
      }
      rebuilt.set(orgId, next);
    }
    this.files.commitGeneration(fresh);
    this.reader = reader;
    this.disposeOrgs();
    this.orgs = rebuilt;
    this.options.logger?.info(
      { collection: this.collection, records, live },
      'embedded index journal compacted',
    );
  }

  /** Replaces an organization's index by its compacted copy. */
  private compactOrg(orgId: string, org: OrgIndex): void {
    this.orgs.set(orgId, org.compacted(this.spills.next()));
    org.dispose();
  }

  private disposeOrgs(): void {
    for (const org of this.orgs.values()) org.dispose();
    this.orgs.clear();
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
    const index = new EmbeddedIndex({
      dir: this.dir,
      collection,
      dimensions: readMeta(join(this.dir, collection)).dimensions,
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
