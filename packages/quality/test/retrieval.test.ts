// Ranking measures of the evaluations (MRR, nDCG, thread Hit@k) and the BM25 baseline they
// compare the project's search with.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  Bm25Baseline,
  evaluateRankings,
  formatComparison,
  ndcg,
  reciprocalRank,
  threadHit,
} from '@support-agent/quality';

describe('evaluation metrics', () => {
  const relevant = new Set(['t1_a', 't1_b']);
  const threadOf = new Map([
    ['t1_a', 't1'],
    ['t1_b', 't1'],
    ['t2_a', 't2'],
    ['t3_a', 't3'],
  ]);

  it('when the first relevant entry is at rank 2, then MRR is 1/2', () => {
    assert.equal(reciprocalRank(['t2_a', 't1_b', 't1_a'], relevant, 5), 0.5);
    assert.equal(reciprocalRank(['t2_a', 't3_a'], relevant, 5), 0);
  });

  it('when the ranking is ideal, then nDCG is 1; otherwise it is discounted by rank', () => {
    assert.equal(ndcg(['t1_a', 't1_b', 't2_a'], relevant, 5), 1);
    const expected = (1 / Math.log2(3) + 1 / Math.log2(4)) / (1 + 1 / Math.log2(3));
    assert.ok(Math.abs(ndcg(['t2_a', 't1_a', 't1_b'], relevant, 5) - expected) < 1e-12);
  });

  it('when a ranking is collapsed to threads, then Hit@k looks at the first k distinct threads', () => {
    assert.equal(threadHit(['t2_a', 't2_a', 't1_a'], threadOf, 't1', 2), 1);
    assert.equal(threadHit(['t2_a', 't3_a', 't1_a'], threadOf, 't1', 2), 0);
  });

  it('when rankings are evaluated, then queries without judgements are skipped', () => {
    const m = evaluateRankings(
      [
        { queryId: 'q1', threadId: 't1', ranking: ['t1_a'] },
        { queryId: 'q2', threadId: 't9', ranking: ['t1_a'] },
      ],
      { relevant: new Map([['q1', relevant]]), threadOf },
    );
    assert.equal(m.queries, 1);
    assert.equal(m.mrr, 1);
    assert.equal(m.hit, 1);
  });

  it('when the BM25 baseline searches, then documents with the query terms come first', () => {
    const bm25 = new Bm25Baseline([
      { id: 'a', text: 'reset your password in settings' },
      { id: 'b', text: 'download invoices from billing' },
    ]);
    assert.deepEqual(bm25.search('password reset', 5), ['a']);
  });
});

describe('the BM25 baseline', () => {
  it('when a rare query term matches, then it outweighs a common one (Lucene IDF)', () => {
    const bm25 = new Bm25Baseline([
      { id: 'common', text: 'account account settings' },
      { id: 'rare', text: 'account invoices' },
      { id: 'other', text: 'account profile' },
    ]);
    assert.equal(bm25.search('account invoices', 3)[0], 'rare');
  });

  it('when more documents match than asked for, then at most k come back and the weakest is left out', () => {
    const docs = Array.from({ length: 8 }, (_, i) => ({
      id: `d${i}`,
      text: `password ${'reset '.repeat(i)}`,
    }));
    const ranked = new Bm25Baseline(docs).search('reset password', 3);
    assert.equal(ranked.length, 3);
    assert.ok(!ranked.includes('d0'), ranked.join());
  });
});

describe('the comparison table', () => {
  it('when systems are compared, then each gets a row with its three measures', () => {
    const table = formatComparison(5, [
      { name: 'project', metrics: { queries: 2, mrr: 0.75, ndcg: 0.5, hit: 1 } },
      { name: 'BM25', metrics: { queries: 2, mrr: 0.25, ndcg: 0.125, hit: 0.5 } },
    ]);
    assert.match(table, /project\s+0\.7500\s+0\.5000\s+1\.0000\s+2/);
    assert.match(table, /BM25\s+0\.2500\s+0\.1250\s+0\.5000\s+2/);
  });
});
