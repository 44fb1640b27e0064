import type { CandidateQuery } from '../../domain/ports.js';
import { idf } from '../../domain/scoring.js';
import type { OrgIndex } from './org-index.js';
import { seek, type Posting } from './postings.js';
import { TopK } from './top-k.js';

/** A query term's posting being walked (one class: the hot loops see one object shape). */
class Cursor {
  readonly slots: Int32Array;
  readonly weights: Float32Array;
  readonly length: number;
  /** The most the term adds to any entry's score. */
  readonly bound: number;
  pos = 0;

  constructor(
    p: Posting,
    /** The query term's id. */
    readonly id: number,
    /** The query term's weight (count × IDF). */
    readonly weight: number,
  ) {
    this.slots = p.slots;
    this.weights = p.weights;
    this.length = p.length;
    this.bound = weight * p.maxWeight;
  }
}

/**
 * What the lexical pass found: the `limit` best slots, and the BM25 of slots as the first stage
 * reads it (CandidateSet.bm25: the query's terms summed in their order).
 */
export interface LexicalTop {
  /** The best slots, in no order. */
  slots: number[];
  /** The BM25 of each of `slots` (ascending) into `into` (zeroed). */
  bm25Into(slots: Int32Array, into: Float64Array): void;
  /** Frees what bm25Into reads: once done with it, before anything else can search. */
  release(): void;
}

/** The heap of every lexical pass, reused: a pass runs to its end without yielding. */
const lexicalBest = new TopK(0);

/**
 * Up to this many postings in all, adding every posting into per-slot sums is cheaper than
 * MaxScore's bookkeeping (a small organization, or rare terms only).
 */
export const DEFAULT_ACCUMULATE_UP_TO = 8_192;

/**
 * The `query.limit` best entries by BM25 over the postings of the query's terms, exactly, with
 * MaxScore pruning (Turtle & Flood 1995): postings are walked entry by entry in slot order, and
 * once the k-th best score reaches the most the cheapest terms could add together, entries
 * holding only those terms cannot enter the top k, so those terms' (long) postings are no
 * longer walked, only probed for entries that still can. A common word in a query over 100k
 * entries would otherwise touch most of them. Ties at the k-th place: as TopK keeps them.
 */
export function lexicalTop(
  org: OrgIndex,
  query: CandidateQuery,
  accumulateUpTo = DEFAULT_ACCUMULATE_UP_TO,
): LexicalTop {
  const { postings, df } = org.terms;
  // In the query's order: the order in which BM25 adds them up.
  const cursors: Cursor[] = [];
  for (const t of query.terms) {
    const p = postings.get(t.id);
    if (!p || p.length === 0) continue;
    const weight = t.count * idf(org.live, df.get(t.id) ?? 0);
    cursors.push(new Cursor(p, t.id, weight));
  }
  const top = lexicalBest.reset(query.limit);
  if (cursors.length === 0 || query.limit === 0) return new SoughtBm25(top.result(), org, []);
  let postingsInAll = 0;
  for (const c of cursors) postingsInAll += c.length;
  if (postingsInAll <= accumulateUpTo) return accumulated(org, cursors, top);
  // Kept in the query's order for bm25Of (the cursors are sorted below).
  const inQueryOrder = cursors.slice();
  // Cheapest first: the non-essential terms are always a prefix, whose bounds add up to
  // upTo[i] for the first i + 1 of them.
  cursors.sort((a, b) => a.bound - b.bound);
  const upTo: number[] = [];
  cursors.reduce((sum, c) => {
    upTo.push(sum + c.bound);
    return sum + c.bound;
  }, 0);
  const alive = org.alive;
  let essential = 0;
  let threshold = -Infinity;
  for (;;) {
    // The next entry holding an essential term.
    let slot = Infinity;
    for (let i = essential; i < cursors.length; i++) {
      const c = cursors[i]!;
      if (c.pos < c.length && c.slots[c.pos]! < slot) slot = c.slots[c.pos]!;
    }
    if (slot === Infinity) break;
    let score = 0;
    for (let i = essential; i < cursors.length; i++) {
      const c = cursors[i]!;
      if (c.pos < c.length && c.slots[c.pos] === slot) score += c.weight * c.weights[c.pos++]!;
    }
    if (alive[slot] === 0) continue;
    // The non-essential terms, most valuable first, while they can still lift it past the k-th.
    for (let i = essential - 1; i >= 0 && score + upTo[i]! > threshold; i--) {
      const c = cursors[i]!;
      c.pos = seek(c.slots, c.pos, c.length, slot);
      if (c.pos < c.length && c.slots[c.pos] === slot) score += c.weight * c.weights[c.pos]!;
    }
    if (!top.offer(slot, score)) continue;
    if (top.size === query.limit) {
      threshold = top.floor;
      while (essential < cursors.length && upTo[essential]! <= threshold) essential++;
    }
  }
  return new SoughtBm25(top.result(), org, inQueryOrder);
}

/**
 * The pruned pass's slots: it added their terms most valuable first, not in the query's order,
 * so their BM25 is read again from the postings.
 */
class SoughtBm25 implements LexicalTop {
  constructor(
    readonly slots: number[],
    private readonly org: OrgIndex,
    private readonly terms: readonly { id: number; weight: number }[],
  ) {}

  bm25Into(slots: Int32Array, into: Float64Array): void {
    this.org.terms.bm25Of(slots, this.terms, into);
  }

  release(): void {}
}

/**
 * The accumulated pass's slots: every touched slot's sum is still in the organization's
 * scratch (added in the query's order), read back as it is, and cleared on release.
 */
class AccumulatedBm25 implements LexicalTop {
  constructor(
    readonly slots: number[],
    private readonly scores: Float64Array,
    private readonly touched: Int32Array,
    private touchedCount: number,
  ) {}

  bm25Into(slots: Int32Array, into: Float64Array): void {
    for (let k = 0; k < slots.length; k++) into[k] = this.scores[slots[k]!]!;
  }

  release(): void {
    for (let i = 0; i < this.touchedCount; i++) this.scores[this.touched[i]!] = 0;
    this.touchedCount = 0;
  }
}

/**
 * Every posting added into per-slot sums (in doubles, terms in the query's order: each slot's
 * BM25 as the first stage reads it), offered in the order the slots were first touched. The
 * sums stay in the organization's scratch for bm25Into until released.
 */
function accumulated(org: OrgIndex, cursors: Cursor[], top: TopK): LexicalTop {
  const { scores, touched } = org.lexicalScratch();
  const alive = org.alive;
  let n = 0;
  for (const c of cursors) {
    for (let i = 0; i < c.length; i++) {
      const slot = c.slots[i]!;
      if (alive[slot] === 0) continue;
      // Listed on its first touch, without a branch (first or not goes either way at random):
      // the slot is written at the list's end either way, and kept there only the first time.
      touched[n] = slot;
      n += +(scores[slot] === 0);
      scores[slot]! += c.weight * c.weights[i]!;
    }
  }
  for (let i = 0; i < n; i++) {
    const slot = touched[i]!;
    const score = scores[slot]!;
    // Most slots do not beat the k-th best: compared here, not in a call.
    if (score > top.floor) top.offer(slot, score);
  }
  return new AccumulatedBm25(top.result(), scores, touched, n);
}
