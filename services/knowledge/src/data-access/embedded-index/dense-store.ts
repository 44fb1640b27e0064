import { closeSync, mkdirSync, openSync, readSync, rmSync, writeSync } from 'node:fs';
import { join } from 'node:path';

/** Dense vectors are stored in chunks of this many rows: growing never copies them. */
export const CHUNK_ROWS = 1_024;

/**
 * Where a large organization's int8 vectors go once a chunk of CHUNK_ROWS rows is full: a
 * file of fixed-size rows (row = slot × dimensions bytes). Big organizations read dense
 * vectors only for the ≤ 100 candidates of a query (their brute-force pass is over the
 * exact-dense budget), one `pread` each from the page cache, so keeping them in the process
 * only cost memory (≈ 0.5 KB per entry at 512 dimensions). The file is derived data: it is
 * rewritten from the journal at every start (no fsync) and deleted with its index.
 */
export class VectorSpill {
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

/** The spill files of one collection (`<collection>/vectors/<n>.i8`), one per organization index. */
export class SpillFiles {
  private serial = 0;

  constructor(
    readonly dir: string,
    private readonly dimensions: number,
    /** Off: every vector stays in memory. */
    readonly enabled: boolean,
  ) {}

  /** Removes the files of a previous run (they are derived from the journal). */
  reset(): void {
    if (!this.enabled) return;
    rmSync(this.dir, { recursive: true, force: true });
    mkdirSync(this.dir, { recursive: true });
  }

  /** A spill file for a new organization index (none when spilling is off). */
  next(): VectorSpill | undefined {
    if (!this.enabled) return undefined;
    return new VectorSpill(join(this.dir, `${++this.serial}.i8`), this.dimensions);
  }
}

/** A query vector's non-zero components, ascending (what dot products and the dense pass visit). */
export interface SparseQuery {
  idx: Int32Array;
  val: Float32Array;
  /** Where each component's dimension starts in a float32 chunk (idx · CHUNK_ROWS). */
  columns: Int32Array;
  nnz: number;
}

/**
 * The non-zero components of `q`: the built-in embeddings of a short query have few. Written
 * into `into` when given (its arrays grown to q's length when shorter), so a caller that reads
 * the result before yielding can keep one.
 */
export function sparseQuery(q: Float32Array, into?: SparseQuery): SparseQuery {
  const out = into ?? emptySparseQuery();
  if (out.idx.length < q.length) {
    out.idx = new Int32Array(q.length);
    out.val = new Float32Array(q.length);
    out.columns = new Int32Array(q.length);
  }
  const { idx, val, columns } = out;
  // One pass without a branch (whether a component is 0 goes either way at random): every
  // component is written at the end of the list, which moves on only past a non-zero one.
  let nnz = 0;
  for (let j = 0; j < q.length; j++) {
    const v = q[j]!;
    idx[nnz] = j;
    val[nnz] = v;
    columns[nnz] = j * CHUNK_ROWS;
    nnz += +(v !== 0);
  }
  out.nnz = nnz;
  return out;
}

/** A sparse query of no components, to be written into by sparseQuery. */
export function emptySparseQuery(): SparseQuery {
  return { idx: new Int32Array(0), val: new Float32Array(0), columns: new Int32Array(0), nnz: 0 };
}

/**
 * One organization's dense vectors by slot, in chunks of CHUNK_ROWS rows: float32, or int8
 * with one scale per vector once quantized (a quarter of the memory; cosines within ~1e-3).
 * A float32 chunk is stored dimension by dimension (component j of its row r at
 * j · CHUNK_ROWS + r), so the brute-force pass reads, for a block of rows, each of the
 * query's dimensions as a few adjacent values (dotChunk); int8 chunks are stored row by row,
 * as the spill file keeps them. A `null` chunk is a full int8 chunk that lives in the spill
 * file.
 */
export class DenseVectors {
  chunks: Array<Float32Array | Int8Array | null> = [];
  quantized = false;
  scales = new Float32Array(0);

  constructor(
    readonly dimensions: number,
    /** Where full int8 chunks go, if anywhere (else they stay in memory). */
    private readonly spill?: VectorSpill,
  ) {}

  /** Makes room for the scales of `capacity` slots (chunks are allocated as slots reach them). */
  ensureCapacity(capacity: number): void {
    if (capacity <= this.scales.length) return;
    const scales = new Float32Array(capacity);
    scales.set(this.scales);
    this.scales = scales;
  }

  /** Stores the vector of a new slot (slots are written once, in ascending order). */
  write(slot: number, v: Float32Array): void {
    const dim = this.dimensions;
    const c = Math.floor(slot / CHUNK_ROWS);
    // Chunks are allocated as slots reach them, never ahead (capacity grows by up to 2×).
    if (c === this.chunks.length) {
      const rows = CHUNK_ROWS * dim;
      this.chunks.push(this.quantized ? new Int8Array(rows) : new Float32Array(rows));
    }
    const chunk = this.chunks[c];
    if (!chunk) throw new Error(`dense chunk of slot ${slot} is already spilled`);
    const r = slot % CHUNK_ROWS;
    if (chunk instanceof Float32Array) {
      for (let j = 0; j < dim; j++) chunk[j * CHUNK_ROWS + r] = v[j]!;
      return;
    }
    // Symmetric int8: the largest component maps to ±127.
    const off = r * dim;
    let max = 0;
    for (let j = 0; j < dim; j++) max = Math.max(max, Math.abs(v[j]!));
    const scale = max / 127;
    if (scale === 0) chunk.fill(0, off, off + dim);
    else for (let j = 0; j < dim; j++) chunk[off + j] = Math.round(v[j]! / scale);
    this.scales[slot] = scale;
    // Slots are only ever appended: once a chunk's last row is written, it is final.
    if (r === CHUNK_ROWS - 1) this.spillChunk(c);
  }

  /** The slot's vector as float32 (a copy; dequantized when int8). */
  read(slot: number): Float32Array {
    const dim = this.dimensions;
    const out = new Float32Array(dim);
    const chunk = this.chunks[Math.floor(slot / CHUNK_ROWS)];
    if (chunk instanceof Float32Array) {
      const r = slot % CHUNK_ROWS;
      for (let j = 0; j < dim; j++) out[j] = chunk[j * CHUNK_ROWS + r]!;
      return out;
    }
    const [rows, off] = this.int8Row(slot);
    const scale = this.scales[slot]!;
    for (let j = 0; j < dim; j++) out[j] = rows[off + j]! * scale;
    return out;
  }

  /**
   * Σ q[j]·v[j] over the query's non-zero dimensions in ascending order, in doubles, with v
   * the slot's float32 vector (dequantized to float32 when int8): the same value as the dot
   * product of the query with `read(slot)`, without copying the vector.
   */
  dot(slot: number, q: SparseQuery): number {
    const { idx, val, nnz } = q;
    const chunk = this.chunks[Math.floor(slot / CHUNK_ROWS)];
    let s = 0;
    if (chunk instanceof Float32Array) {
      const r = slot % CHUNK_ROWS;
      for (let i = 0; i < nnz; i++) s += val[i]! * chunk[idx[i]! * CHUNK_ROWS + r]!;
      return s;
    }
    const [rows, off] = this.int8Row(slot);
    const scale = this.scales[slot]!;
    for (let i = 0; i < nnz; i++) s += val[i]! * Math.fround(rows[off + idx[i]!]! * scale);
    return s;
  }

  /**
   * `dot` of each of `slots` (ascending) into `into[k]`, the same values. Float32 chunks are
   * read a column at a time across the slots of the chunk, so each of the query's dimensions
   * is one forward sweep through its column instead of one jump per slot and dimension; the
   * order in which a slot's sum adds its terms is `dot`'s.
   */
  dotSlots(slots: Int32Array, q: SparseQuery, into: Float64Array): void {
    const { val, nnz, columns } = q;
    let k = 0;
    while (k < slots.length) {
      const c = Math.floor(slots[k]! / CHUNK_ROWS);
      const chunk = this.chunks[c];
      let end = k + 1;
      while (end < slots.length && Math.floor(slots[end]! / CHUNK_ROWS) === c) end++;
      if (!(chunk instanceof Float32Array)) {
        for (; k < end; k++) into[k] = this.dot(slots[k]!, q);
        continue;
      }
      const base = c * CHUNK_ROWS;
      into.fill(0, k, end);
      // Eight of the query's dimensions per sweep over the slots, as in dotChunk: each slot's
      // sum is loaded and stored once per eight terms, added in `dot`'s order. Kept apart from
      // dotChunk's loop: one loop for both, reading rows through an index array, made the
      // brute-force pass 25 % dearer (38 → 47 µs per 1,024 rows at 90 dimensions).
      let i = 0;
      for (; i + 7 < nnz; i += 8) {
        const v0 = val[i]!;
        const v1 = val[i + 1]!;
        const v2 = val[i + 2]!;
        const v3 = val[i + 3]!;
        const v4 = val[i + 4]!;
        const v5 = val[i + 5]!;
        const v6 = val[i + 6]!;
        const v7 = val[i + 7]!;
        const c0 = columns[i]! - base;
        const c1 = columns[i + 1]! - base;
        const c2 = columns[i + 2]! - base;
        const c3 = columns[i + 3]! - base;
        const c4 = columns[i + 4]! - base;
        const c5 = columns[i + 5]! - base;
        const c6 = columns[i + 6]! - base;
        const c7 = columns[i + 7]! - base;
        for (let j = k; j < end; j++) {
          const r = slots[j]!;
          let s = into[j]!;
          s += v0 * chunk[c0 + r]!;
          s += v1 * chunk[c1 + r]!;
          s += v2 * chunk[c2 + r]!;
          s += v3 * chunk[c3 + r]!;
          s += v4 * chunk[c4 + r]!;
          s += v5 * chunk[c5 + r]!;
          s += v6 * chunk[c6 + r]!;
          s += v7 * chunk[c7 + r]!;
          into[j] = s;
        }
      }
      for (; i < nnz; i++) {
        const v = val[i]!;
        const col = columns[i]! - base;
        for (let j = k; j < end; j++) into[j]! += v * chunk[col + slots[j]!]!;
      }
      k = end;
    }
  }

  /**
   * `dot` of every slot of float32 chunk `c` (its first `rows` rows) into `into`, indexed by
   * row: the brute-force pass. The query's dimensions are taken eight at a time, each group
   * swept down its eight columns together, adding to each row's sum in the order `dot` adds
   * (so the values are identical): eight sequential streams of memory at a time, which the
   * CPU's prefetchers follow, instead of one jump per dimension.
   */
  dotChunk(c: number, rows: number, q: SparseQuery, into: Float64Array): void {
    const chunk = this.chunks[c] as Float32Array;
    const { val, nnz, columns } = q;
    into.fill(0, 0, rows);
    let i = 0;
    for (; i + 7 < nnz; i += 8) {
      const v0 = val[i]!;
      const v1 = val[i + 1]!;
      const v2 = val[i + 2]!;
      const v3 = val[i + 3]!;
      const v4 = val[i + 4]!;
      const v5 = val[i + 5]!;
      const v6 = val[i + 6]!;
      const v7 = val[i + 7]!;
      const c0 = columns[i]!;
      const c1 = columns[i + 1]!;
      const c2 = columns[i + 2]!;
      const c3 = columns[i + 3]!;
      const c4 = columns[i + 4]!;
      const c5 = columns[i + 5]!;
      const c6 = columns[i + 6]!;
      const c7 = columns[i + 7]!;
      for (let r = 0; r < rows; r++) {
        let s = into[r]!;
        s += v0 * chunk[c0 + r]!;
        s += v1 * chunk[c1 + r]!;
        s += v2 * chunk[c2 + r]!;
        s += v3 * chunk[c3 + r]!;
        s += v4 * chunk[c4 + r]!;
        s += v5 * chunk[c5 + r]!;
        s += v6 * chunk[c6 + r]!;
        s += v7 * chunk[c7 + r]!;
        into[r] = s;
      }
    }
    for (; i < nnz; i++) {
      const v = val[i]!;
      const col = columns[i]!;
      for (let r = 0; r < rows; r++) into[r]! += v * chunk[col + r]!;
    }
  }

  /** The int8 rows of chunk `c` (read into `buffer` when spilled). */
  int8Chunk(c: number, buffer: () => Int8Array): Int8Array {
    const chunk = this.chunks[c];
    if (chunk === null) return this.spill!.read(c * CHUNK_ROWS, buffer());
    return chunk as Int8Array;
  }

  /**
   * Switches to int8 (once, when the organization grows past its threshold), re-encoding
   * the first `rows` slots of which those with `alive[slot]` set are live.
   */
  quantize(rows: number, alive: Uint8Array): void {
    const floats = this.chunks;
    this.chunks = floats.map(() => new Int8Array(CHUNK_ROWS * this.dimensions));
    this.quantized = true;
    const row = new Float32Array(this.dimensions);
    for (let slot = 0; slot < rows; slot++) {
      if (!alive[slot]) continue;
      const r = slot % CHUNK_ROWS;
      const chunk = floats[Math.floor(slot / CHUNK_ROWS)] as Float32Array;
      for (let j = 0; j < this.dimensions; j++) row[j] = chunk[j * CHUNK_ROWS + r]!;
      this.write(slot, row);
    }
    // Full chunks whose last row is a dead slot were not spilled by write.
    for (let c = 0; (c + 1) * CHUNK_ROWS <= rows; c++) this.spillChunk(c);
  }

  /** Forgets the spilled vectors (the index is being replaced or closed). */
  dispose(): void {
    this.spill?.dispose();
  }

  /** The int8 rows holding a slot's vector and where it starts (a spilled row is read back alone). */
  private int8Row(slot: number): [Int8Array, number] {
    const chunk = this.chunks[Math.floor(slot / CHUNK_ROWS)];
    if (chunk === null) return [this.spill!.read(slot, new Int8Array(this.dimensions)), 0];
    return [chunk as Int8Array, (slot % CHUNK_ROWS) * this.dimensions];
  }

  /** Moves a full int8 chunk to the spill file, if there is one. */
  private spillChunk(c: number): void {
    const chunk = this.chunks[c];
    if (!this.spill || !(chunk instanceof Int8Array)) return;
    this.spill.write(c * CHUNK_ROWS, chunk);
    this.chunks[c] = null;
  }
}
