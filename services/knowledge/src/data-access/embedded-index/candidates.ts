import type {
  Candidate,
  CandidateQuery,
  CandidateSet,
  EntryProfile,
  StoredEntry,
} from '../../domain/ports.js';
import { idf } from '../../domain/scoring.js';
import { CHUNK_ROWS, sparseQuery, type SparseQuery } from './dense-store.js';
import type { OrgIndex } from './org-index.js';
import type { SlotTerms } from './postings.js';

/**
 * The hybrid candidates of one organization: the best BM25 matches over the inverted index
 * (only entries sharing a term with the query are touched), plus, when the organization is
 * small enough (live entries × dimensions within `exactDenseBudget`), the exact best dense
 * matches by brute force, so purely semantic matches are found too. Rescoring is the domain's.
 */
export function candidatesOf(
  org: OrgIndex | undefined,
  query: CandidateQuery,
  exactDenseBudget: number,
): CandidateSet {
  const documentFrequency = new Map<number, number>();
  if (!org || org.live === 0) return { docCount: 0, documentFrequency, candidates: [] };
  for (const t of query.terms) documentFrequency.set(t.id, org.terms.df.get(t.id) ?? 0);

  const dense = query.dense ? sparseQuery(query.dense) : null;
  const chosen = new Set<number>();
  for (const slot of lexicalTop(org, query)) chosen.add(slot);
  // The brute-force pass over float32 vectors computes every slot's exact cosine: kept for
  // the candidates instead of computing theirs again.
  let cosines: Float64Array | undefined;
  if (dense && org.live * org.dimensions <= exactDenseBudget) {
    if (!org.dense.quantized) cosines = org.denseScratch;
    for (const slot of denseTop(org, dense, query.limit, cosines)) chosen.add(slot);
  }

  const candidates: Candidate[] = [];
  const termIds = [...new Set(query.terms.map((t) => t.id))].sort((a, b) => a - b);
  for (const slot of chosen) {
    // The entry's weights for the query's terms: all that lexical scoring reads.
    const terms = org.sparseFor(slot, termIds);
    candidates.push(
      new SlotCandidate(
        org,
        slot,
        org.entryAt(slot),
        dense ? (cosines?.[slot] ?? org.dense.dot(slot, dense)) : null,
        terms,
      ),
    );
  }
  return { docCount: org.live, documentFrequency, candidates };
}

/** A candidate whose profile is read from the organization's arrays when the reranker asks. */
class SlotCandidate implements Candidate {
  constructor(
    private readonly org: OrgIndex,
    private readonly slot: number,
    readonly entry: StoredEntry,
    readonly cosine: number | null,
    readonly sparse: SlotTerms,
  ) {}

  get profile(): EntryProfile {
    return this.org.profileOf(this.slot, this.sparse);
  }
}

/** Best lexical matches: BM25 accumulated over the postings of the query terms. */
function lexicalTop(org: OrgIndex, query: CandidateQuery): number[] {
  const scores = org.scratch;
  const touched = org.touched;
  const alive = org.alive;
  const { postings, df } = org.terms;
  let n = 0;
  for (const t of query.terms) {
    const posting = postings.get(t.id);
    if (!posting) continue;
    const weight = t.count * idf(org.live, df.get(t.id) ?? 0);
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
 * Float32 cosines go into `cosines` (by slot); int8 ones are ranked by a two-sum estimate.
 */
function denseTop(org: OrgIndex, q: SparseQuery, k: number, cosines?: Float64Array): number[] {
  const dim = org.dimensions;
  const top = new TopK(k);
  const alive = org.alive;
  const dense = org.dense;
  const { idx, val, nnz } = q;
  let buffer: Int8Array | undefined;
  const spillBuffer = () => (buffer ??= new Int8Array(CHUNK_ROWS * dim));
  for (let c = 0; c < dense.chunks.length; c++) {
    const first = c * CHUNK_ROWS;
    const last = Math.min(org.size, first + CHUNK_ROWS);
    if (cosines) {
      dense.dotChunk(c, last - first, q, cosines.subarray(first, last));
      for (let slot = first; slot < last; slot++)
        if (alive[slot] !== 0) top.offer(slot, cosines[slot]!);
      continue;
    }
    const rows = dense.int8Chunk(c, spillBuffer);
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
      top.offer(slot, (s0 + s1) * dense.scales[slot]!);
    }
  }
  return top.result();
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
    // A plain loop: Array.from over a typed array goes through the iterator protocol.
    const out = new Array<number>(this.size);
    for (let i = 0; i < this.size; i++) out[i] = this.slots[i]!;
    return out;
  }
}
