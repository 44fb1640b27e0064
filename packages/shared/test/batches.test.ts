// Batches and bounded concurrency (batches.ts), used by the embedded stores' compaction, the
// embeddings and Qdrant adapters, the digest's KB searches and the evaluation scripts.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { chunks, mapConcurrently, sleep } from '../src/index.js';

test('when items are cut into chunks, then each holds at most the size, in order, the last the rest', () => {
  assert.deepEqual(chunks([1, 2, 3, 4, 5], 2), [[1, 2], [3, 4], [5]]);
  assert.deepEqual(chunks([1, 2], 2), [[1, 2]]);
  assert.deepEqual(chunks([], 3), []);
});

test('when work is mapped with a limit, then no more than the limit run at once and results keep input order', async () => {
  let running = 0;
  let most = 0;
  const out = await mapConcurrently([30, 5, 20, 1, 10, 2], 3, async (ms, i) => {
    most = Math.max(most, ++running);
    await sleep(ms);
    running--;
    return `${i}:${ms}`;
  });
  assert.deepEqual(out, ['0:30', '1:5', '2:20', '3:1', '4:10', '5:2']);
  assert.equal(most, 3);
});

test('when one item fails, then the map rejects with its error', async () => {
  await assert.rejects(
    mapConcurrently([1, 2, 3], 2, async (n) => {
      if (n === 2) throw new Error('two');
      return n;
    }),
    /two/,
  );
});
