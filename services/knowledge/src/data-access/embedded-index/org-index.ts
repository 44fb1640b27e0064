import type { SegmentLine } from '@support-agent/shared';
import { answerTermIds, entryTextFacts } from '../../domain/entry-profile.js';
import type { SparseVector, StoredEntry, WriteOutcome } from '../../domain/ports.js';
import { compareIds } from '../../domain/scoring.js';
import { grown } from '../../domain/typed-arrays.js';
import { DenseVectors, type VectorSpill } from './dense-store.js';
import { InvertedIndex } from './postings.js';
import { QuestionFacts } from './question-facts.js';
import {
  JournalEntry,
  type EntrySource,
  termsOfRecord,
  weightsOfRecord,
  type PutRecord,
  parseRecord,
  type EntryTextRecord,
} from './records.js';
import type { JournalReader } from './journal-reader.js';

const HEX64 = /^[0-9a-f]{64}$/;

/**
 * One organization's entries, by slot: slots are append-only (a replaced entry gets a new
 * slot, the old one is marked dead) until the organization is compacted. In memory is only
 * what search needs (vectors, postings, write time, content hash, where the entry's journal
 * line is, what the reranker reads of the question); text, tags and the entry's own sparse
 * vector are read back from the journal.
 */
export class OrgIndex implements EntrySource {
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
  readonly dense: DenseVectors;
  readonly terms = new InvertedIndex();
  readonly questions = new QuestionFacts();
  readonly slotOf = new Map<string, number>();
  /** Scratch of the brute-force dense pass (small organizations only): each slot's cosine. */
  private cosines = new Float64Array(0);
  private scores = new Float64Array(0);
  private touched = new Int32Array(0);
  private sortedIds: string[] | undefined;

  constructor(
    readonly dimensions: number,
    /** Live entries above which dense vectors are kept as int8. */
    readonly quantizeAbove: number,
    /** Reads journal lines back. */
    readonly journal: JournalReader,
    spill?: VectorSpill,
  ) {
    this.dense = new DenseVectors(dimensions, spill);
  }

  /** Forgets the spilled vectors (the index is being replaced or closed). */
  dispose(): void {
    this.dense.dispose();
  }

  /** `sparse`, when given, is the record's sparse vector already decoded. */
  put(
    record: PutRecord,
    at: SegmentLine,
    dense: Float32Array,
    sparse?: SparseVector,
  ): WriteOutcome {
    const previous = this.slotOf.get(record.id);
    if (previous !== undefined) this.kill(previous);
    else this.sortedIds = undefined;
    const slot = this.size++;
    this.ensureCapacity(this.size);
    if (!this.dense.quantized && this.live + 1 > this.quantizeAbove)
      this.dense.quantize(slot, this.alive);
    this.ids[slot] = record.id;
    this.alive[slot] = 1;
    this.updatedAt[slot] = record.u;
    if (HEX64.test(record.h)) this.hashes.set(Buffer.from(record.h, 'hex'), slot * 32);
    else this.otherHashes.set(slot, record.h);
    this.refSegment[slot] = at.segment;
    this.refOffset[slot] = at.offset;
    this.refLength[slot] = at.length;
    this.dense.write(slot, dense);
    // Derived from the text (the journal keeps text and vectors only): the same on every load.
    const facts = entryTextFacts({ question: record.q, answer: record.a, tags: record.g });
    this.questions.write(slot, facts);
    this.terms.add(
      slot,
      sparse?.indices ?? termsOfRecord(record),
      sparse?.values ?? weightsOfRecord(record),
      answerTermIds(facts),
    );
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
    const fresh = new OrgIndex(this.dimensions, this.quantizeAbove, this.journal, spill);
    fresh.ensureCapacity(this.live);
    for (let slot = 0; slot < this.size; slot++) {
      if (!this.alive[slot]) continue;
      fresh.put(this.recordAt(slot), this.lineOf(slot), this.denseOf(slot));
    }
    return fresh;
  }

  /** Live entry ids in code-unit order (cached until the set of ids changes). */
  idsInOrder(): string[] {
    this.sortedIds ??= [...this.slotOf.keys()].sort(compareIds);
    return this.sortedIds;
  }

  lineOf(slot: number): SegmentLine {
    return {
      segment: this.refSegment[slot]!,
      offset: this.refOffset[slot]!,
      length: this.refLength[slot]!,
    };
  }

  /** The slot's journal record (its text, tags and both vectors as written). */
  recordAt(slot: number): PutRecord {
    return this.recordOf(this.ids[slot]!, this.lineOf(slot));
  }

  contentHashOf(slot: number): string {
    return (
      this.otherHashes.get(slot) ??
      Buffer.from(this.hashes.buffer, this.hashes.byteOffset + slot * 32, 32).toString('hex')
    );
  }

  /** The entry `id` at `slot`; its text is read from the journal when first needed. */
  entryAt(slot: number, id: string): StoredEntry {
    // The line stays where it is even if the entry is replaced meanwhile.
    const at = this.lineOf(slot);
    // Searches never ask for the hash (a hex string per candidate): it is read from the
    // line's own record when asked for, so it always matches the text served with it.
    return new JournalEntry(id, this.updatedAt[slot]!, this, slot, at);
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

  /** The slot's vector as float32 (a copy, dequantized when int8). */
  denseOf(slot: number): Float32Array {
    return this.dense.read(slot);
  }

  /**
   * Per-slot sums of lexical scores and the slots touched (allocated on first use; the sums
   * are zeroed again by whoever used them).
   */
  lexicalScratch(): { scores: Float64Array; touched: Int32Array } {
    if (this.scores.length < this.size) {
      this.scores = new Float64Array(this.capacity);
      this.touched = new Int32Array(this.capacity);
    }
    return { scores: this.scores, touched: this.touched };
  }

  /** Room for the cosine of every slot with a query (allocated on first use). */
  cosineScratch(): Float64Array {
    if (this.cosines.length < this.size) this.cosines = new Float64Array(this.capacity);
    return this.cosines;
  }

  ensureCapacity(n: number): void {
    if (n <= this.capacity) return;
    // Doubling while small, then by a quarter: a big organization wastes little on headroom.
    const next = this.capacity < 65_536 ? this.capacity * 2 : Math.ceil(this.capacity * 1.25);
    const capacity = Math.max(n, next, 64);
    this.alive = grown(this.alive, new Uint8Array(capacity));
    this.updatedAt = grown(this.updatedAt, new Float64Array(capacity));
    this.hashes = grown(this.hashes, new Uint8Array(capacity * 32));
    this.refSegment = grown(this.refSegment, new Uint32Array(capacity));
    this.refOffset = grown(this.refOffset, new Float64Array(capacity));
    this.refLength = grown(this.refLength, new Uint32Array(capacity));
    this.dense.ensureCapacity(capacity);
    this.questions.ensureCapacity(capacity);
    this.capacity = capacity;
  }

  /** The record of entry `id` at `at` (checked to be that entry's). */
  recordOf(id: string, at: SegmentLine): PutRecord {
    return checked(parseRecord(this.journal.line(at)), id) as PutRecord;
  }

  /** The text fields of entry `id`'s record at `at` (its vectors left undecoded). */
  textOf(id: string, at: SegmentLine): EntryTextRecord {
    return checked(this.journal.text(at), id);
  }

  /** The content hash of entry `id` stored at `at`: the slot's, unless the slot moved on. */
  contentHashAt(slot: number, id: string, at: SegmentLine): string {
    const current = this.lineOf(slot);
    if (this.ids[slot] === id && current.segment === at.segment && current.offset === at.offset) {
      return this.contentHashOf(slot);
    }
    return this.recordOf(id, at).h;
  }

  private kill(slot: number): void {
    // The entry's terms are in its journal line (replacing or deleting an entry reads it).
    this.terms.forget(termsOfRecord(this.recordAt(slot)));
    this.alive[slot] = 0;
    this.ids[slot] = undefined;
    this.otherHashes.delete(slot);
    this.live--;
  }
}

function checked<R extends { t: string; id?: string }>(record: R, id: string): R {
  if (record.t !== 'put' || record.id !== id)
    throw new Error(`journal line of entry ${id} does not match`);
  return record;
}
