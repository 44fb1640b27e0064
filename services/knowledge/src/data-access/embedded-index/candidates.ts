import type {
  Candidate,
  CandidateQuery,
  CandidateSet,
  EntryProfile,
  StoredEntry,
} from '../../domain/ports.js';
import { CHUNK_ROWS, sparseQuery, type SparseQuery } from './dense-store.js';
import { lexicalTop } from './lexical-top.js';
import type { OrgIndex } from './org-index.js';
import type { SlotTerms } from './postings.js';
import { TopK } from './top-k.js';

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
  accumulateUpTo?: number,
): CandidateSet {
  const documentFrequency = new Map<number, number>();
  if (!org || org.live === 0) return { docCount: 0, documentFrequency, candidates: [] };
  for (const t of query.terms) documentFrequency.set(t.id, org.terms.df.get(t.id) ?? 0);

  const dense = query.dense ? sparseQuery(query.dense) : null;
  const chosen = new Set<number>();
  for (const slot of lexicalTop(org, query, accumulateUpTo)) chosen.add(slot);
  // The brute-force pass over float32 vectors computes every slot's exact cosine: kept for
  // the candidates instead of computing theirs again.
  let cosines: Float64Array | undefined;
  if (dense && org.live * org.dimensions <= exactDenseBudget) {
    if (!org.dense.quantized) cosines = org.cosineScratch();
    for (const slot of denseTop(org, dense, query.limit, cosines)) chosen.add(slot);
  }

  // The entries' weights for the query's terms (all that lexical scoring reads), each posting
  // walked once over the candidates in slot order; then the vectors, also in slot order.
  const slots = Array.from(Int32Array.from(chosen).sort());
  const termIds = [...new Set(query.terms.map((t) => t.id))].sort((a, b) => a - b);
  const weights = org.terms.weightsOf(slots, termIds);
  const candidates = slots.map(
    (slot, k): Candidate =>
      new SlotCandidate(
        org,
        slot,
        org.entryAt(slot),
        dense ? (cosines?.[slot] ?? org.dense.dot(slot, dense)) : null,
        weights[k]!,
      ),
  );
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
