import { noCandidates } from '../../domain/candidate-set.js';
import type {
  Candidate,
  CandidateQuery,
  CandidateSet,
  EntryProfile,
  QueryTerm,
  StoredEntry,
} from '../../domain/ports.js';
import type { QuestionTerms } from '../../domain/question-vocabulary.js';
import { Scratch } from '../../domain/typed-arrays.js';
import { CHUNK_ROWS, emptySparseQuery, sparseQuery, type SparseQuery } from './dense-store.js';
import { lexicalTop } from './lexical-top.js';
import { answerHolds, type Posting } from './postings.js';
import type { OrgIndex } from './org-index.js';
import { TopK } from './top-k.js';

/** The query vector's components, reused: candidatesOf reads them before it returns. */
const queryComponents = emptySparseQuery();

/**
 * The hybrid candidates of one organization: the best BM25 matches over the inverted index
 * (only entries sharing a term with the query are touched), with the BM25 that chose them (not
 * read again from their postings), and every candidate's dense cosine. When the words alone find fewer than `query.limit` entries (rare or misspelt
 * words) and the organization is small enough (live entries × dimensions within
 * `exactDenseBudget`), the exact best dense matches are added by brute force, so purely
 * semantic matches fill the list. When the words find enough, a dense-only entry would have
 * to outrank all of them to matter: measured on StackFAQ (also with misspelt queries), the
 * pass then changed no ranking and cost a fifth of the search's CPU (docs/performance.md).
 * Rescoring is the domain's.
 */
export function candidatesOf(
  org: OrgIndex | undefined,
  query: CandidateQuery,
  exactDenseBudget: number,
  accumulateUpTo?: number,
): CandidateSet {
  const documentFrequency = new Map<number, number>();
  if (!org || org.live === 0) return noCandidates(query.terms);
  for (const t of query.terms) documentFrequency.set(t.id, org.terms.df.get(t.id) ?? 0);

  const dense = query.dense ? sparseQuery(query.dense, queryComponents) : null;
  const lexical = lexicalTop(org, query, accumulateUpTo);
  try {
    // The brute-force pass over float32 vectors computes every slot's exact cosine: kept for
    // the candidates instead of computing theirs again.
    let cosines: Float64Array | undefined;
    let semantic: number[] = [];
    const fillUp = lexical.slots.length < query.limit;
    if (dense && fillUp && org.live * org.dimensions <= exactDenseBudget) {
      if (!org.dense.quantized) cosines = org.cosineScratch();
      semantic = denseTop(org, dense, query.limit, cosines);
    }
    const union = sortedUnion(lexical.slots, semantic);
    const { slots, bm25, cosines: candidateCosines } = candidateColumns(union.length, !!dense);
    slots.set(union);
    // Their BM25 as the lexical pass left it, then their vectors, in slot order.
    lexical.bm25Into(slots, bm25);
    if (dense && candidateCosines) {
      if (cosines) for (let k = 0; k < slots.length; k++) candidateCosines[k] = cosines[slots[k]!]!;
      else org.dense.dotSlots(slots, dense, candidateCosines);
    }
    return new SlotCandidates(
      org,
      slots,
      query.terms,
      { docCount: org.live, documentFrequency },
      bm25,
      candidateCosines,
    );
  } finally {
    lexical.release();
  }
}

/**
 * The columns of `n` candidates, zeroed, as views of one buffer: they outlive the call (the
 * reranker reads them after an await), so they cannot be reused, and one allocation costs a
 * third of three (typed arrays' buffers live outside V8's heap).
 */
function candidateColumns(n: number, withCosines: boolean) {
  const cosineCount = withCosines ? n : 0;
  // Float64 columns first, so every view starts at a multiple of its element size.
  const buffer = new ArrayBuffer(8 * (n + cosineCount) + 4 * n);
  return {
    bm25: new Float64Array(buffer, 0, n),
    cosines: withCosines ? new Float64Array(buffer, 8 * n, n) : null,
    slots: new Int32Array(buffer, 8 * (n + cosineCount), n),
  };
}

/** The union's scratch, reused: it is copied into the candidates' own columns at once. */
const union = new Scratch((n) => new Int32Array(n));

/** Both lists' slots, ascending, each once (a view of a scratch, valid until the next call). */
function sortedUnion(a: readonly number[], b: readonly number[]): Int32Array {
  const all = union.take(a.length + b.length);
  all.set(a);
  all.set(b, a.length);
  all.sort();
  let n = 0;
  for (let i = 0; i < all.length; i++) if (i === 0 || all[i] !== all[i - 1]) all[n++] = all[i]!;
  return all.subarray(0, n);
}

/**
 * An organization's candidates by slot: the columns the first stage reads, and objects (entry
 * read from the journal when asked, profile from the organization's arrays) for the few it
 * passes on. Ids and journal positions are taken now: the entry may be replaced or deleted
 * before the reranker asks, and its line stays where it was. The answer flags are read from the
 * postings when asked: what a posting says of a slot it holds never changes (answerHolds).
 */
class SlotCandidates implements CandidateSet {
  readonly docCount: number;
  readonly documentFrequency: Map<number, number>;
  private readonly ids: string[];
  /** The posting of each query term (undefined when no entry holds it), for the answer flags. */
  private readonly postings: (Posting | undefined)[];

  constructor(
    private readonly org: OrgIndex,
    private readonly slots: Int32Array,
    terms: readonly QueryTerm[],
    stats: { docCount: number; documentFrequency: Map<number, number> },
    readonly bm25: Float64Array,
    readonly cosines: Float64Array | null,
  ) {
    this.docCount = stats.docCount;
    this.documentFrequency = stats.documentFrequency;
    // A plain loop: Array.from over a typed array goes through the iterator protocol.
    this.ids = new Array<string>(slots.length);
    for (let k = 0; k < slots.length; k++) this.ids[k] = org.ids[slots[k]!]!;
    this.postings = terms.map((t) => org.terms.postings.get(t.id));
  }

  get size(): number {
    return this.slots.length;
  }

  idOf(k: number): string {
    return this.ids[k]!;
  }

  candidate(k: number): Candidate {
    const slot = this.slots[k]!;
    const questions = this.org.questions;
    return new SlotCandidate(
      this.org.entryAt(slot, this.ids[k]!),
      this.cosines ? this.cosines[k]! : null,
      questions.keys[slot]!,
      questions.termsOf(slot),
      questions.gramNorms[slot]!,
      this.postings,
      slot,
    );
  }
}

/**
 * A candidate and its profile (what the reranker reads of its question, from the
 * organization's arrays) as one object: the reranker asks for 20 per search, and a candidate,
 * a profile and a closure over the answer flags were three allocations each.
 */
class SlotCandidate implements Candidate, EntryProfile {
  readonly profile: EntryProfile = this;

  constructor(
    readonly entry: StoredEntry,
    readonly cosine: number | null,
    readonly questionKey: number,
    readonly questionTerms: QuestionTerms,
    readonly questionGramNorm2: number,
    /** The postings of the query's terms (SlotCandidates'), where the answer flags are. */
    private readonly postings: readonly (Posting | undefined)[],
    private readonly slot: number,
  ) {}

  inAnswer(_term: QueryTerm, index: number): boolean {
    const p = this.postings[index];
    return p !== undefined && answerHolds(p, this.slot);
  }
}

/** The heap of every brute-force pass, reused: a pass runs to its end without yielding. */
const denseBest = new TopK(0);

/**
 * Exact dense nearest neighbours by brute force (only for small organizations). Only the
 * query's non-zero dimensions are visited: the built-in embeddings of a short query touch
 * a fraction of them, so this is several times cheaper than a full dot product per entry.
 * Float32 cosines go into `cosines` (by slot); int8 ones are ranked by a two-sum estimate.
 */
function denseTop(org: OrgIndex, q: SparseQuery, k: number, cosines?: Float64Array): number[] {
  const dim = org.dimensions;
  const top = denseBest.reset(k);
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
      for (let slot = first; slot < last; slot++) {
        const cosine = cosines[slot]!;
        if (alive[slot] !== 0 && cosine > top.floor) top.offer(slot, cosine);
      }
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
      const estimate = (s0 + s1) * dense.scales[slot]!;
      if (estimate > top.floor) top.offer(slot, estimate);
    }
  }
  return top.result();
}
