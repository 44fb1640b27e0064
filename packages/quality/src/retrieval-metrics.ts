/**
 * Retrieval metrics of the search-quality evaluation (used by scripts/eval-search.ts
 * and test/quality.eval.ts): MRR@k and nDCG@k at entry level with binary relevance,
 * Hit@k at thread level (the ranking collapsed to distinct threads, in order).
 */

export interface RankedQuery {
  queryId: string;
  /** Thread the query was written for. */
  threadId: string;
  /** Entry ids, best first. */
  ranking: string[];
}

export interface Judgements {
  /** query id → relevant entry ids */
  relevant: Map<string, Set<string>>;
  /** entry id → thread id */
  threadOf: Map<string, string>;
}

export interface Metrics {
  queries: number;
  mrr: number;
  ndcg: number;
  hit: number;
}

export function reciprocalRank(ranking: string[], relevant: Set<string>, k: number): number {
  const i = ranking.slice(0, k).findIndex((id) => relevant.has(id));
  return i < 0 ? 0 : 1 / (i + 1);
}

export function ndcg(ranking: string[], relevant: Set<string>, k: number): number {
  let dcg = 0;
  ranking.slice(0, k).forEach((id, i) => {
    if (relevant.has(id)) dcg += 1 / Math.log2(i + 2);
  });
  let ideal = 0;
  for (let i = 0; i < Math.min(k, relevant.size); i++) ideal += 1 / Math.log2(i + 2);
  return ideal > 0 ? dcg / ideal : 0;
}

/** 1 when the query's thread is among the first k distinct threads of the ranking. */
export function threadHit(
  ranking: string[],
  threadOf: Map<string, string>,
  threadId: string,
  k: number,
): number {
  const threads: string[] = [];
  for (const id of ranking) {
    const t = threadOf.get(id);
    if (t === undefined || threads.includes(t)) continue;
    threads.push(t);
    if (threads.length === k) break;
  }
  return threads.includes(threadId) ? 1 : 0;
}

/** The rank cut-off of the search figures (MRR@5, nDCG@5, Hit@5): the hits an agent reads. */
export const K = 5;

/** Mean metrics over the queries that have judgements. */
export function evaluateRankings(rankings: RankedQuery[], judgements: Judgements, k = K): Metrics {
  let n = 0;
  let mrr = 0;
  let nd = 0;
  let hit = 0;
  for (const q of rankings) {
    const relevant = judgements.relevant.get(q.queryId);
    if (!relevant || relevant.size === 0) continue;
    n++;
    mrr += reciprocalRank(q.ranking, relevant, k);
    nd += ndcg(q.ranking, relevant, k);
    hit += threadHit(q.ranking, judgements.threadOf, q.threadId, k);
  }
  return n === 0
    ? { queries: 0, mrr: 0, ndcg: 0, hit: 0 }
    : { queries: n, mrr: mrr / n, ndcg: nd / n, hit: hit / n };
}

/** A two-column comparison table for the console. */
export function formatComparison(k: number, rows: { name: string; metrics: Metrics }[]): string {
  const header = ['system', `MRR@${k}`, `nDCG@${k}`, `Hit@${k} (thread)`, 'queries'];
  const lines = rows.map((r) => [
    r.name,
    r.metrics.mrr.toFixed(4),
    r.metrics.ndcg.toFixed(4),
    r.metrics.hit.toFixed(4),
    String(r.metrics.queries),
  ]);
  const widths = header.map((h, i) => Math.max(h.length, ...lines.map((l) => l[i]!.length)));
  const fmt = (cells: string[]) => cells.map((c, i) => c.padEnd(widths[i]!)).join('  ');
  return [fmt(header), fmt(widths.map((w) => '-'.repeat(w))), ...lines.map(fmt)].join('\n');
}
