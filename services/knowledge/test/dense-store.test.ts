// The embedded index's dense vectors: the brute-force pass against the scalar dot product, and
// the switch to int8.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { mulberry32 } from '@support-agent/shared';
import {
  CHUNK_ROWS,
  DenseVectors,
  sparseQuery,
} from '../src/data-access/embedded-index/dense-store.js';

const DIMENSIONS = 24;

/** Random float32 vectors with some zero components, as rows of an organization. */
function vectors(count: number, seed: number): Float32Array[] {
  const random = mulberry32(seed);
  return Array.from({ length: count }, () =>
    Float32Array.from({ length: DIMENSIONS }, () => (random() < 0.2 ? 0 : random() * 2 - 1)),
  );
}

describe('dense vectors', () => {
  test('when a query vector is made sparse, then it lists exactly its non-zero components in ascending order, into the same arrays each time', () => {
    const into = sparseQuery(new Float32Array(DIMENSIONS));
    assert.equal(into.nnz, 0, 'the zero vector has no components');
    const arrays = [into.idx, into.val, into.columns];
    for (const seed of [1, 2, 3]) {
      const [query] = vectors(1, seed);
      query![0] = -0; // negative zero is zero
      query![DIMENSIONS - 1] = 0.5; // the last component is read
      const q = sparseQuery(query!, into);
      assert.equal(q, into);
      assert.deepEqual([q.idx, q.val, q.columns], arrays, 'no new arrays');
      const expected = [...query!.keys()].filter((j) => query![j] !== 0);
      assert.ok(expected.length > 1 && expected.length < DIMENSIONS - 1);
      assert.deepEqual([...q.idx.subarray(0, q.nnz)], expected);
      assert.deepEqual(
        [...q.val.subarray(0, q.nnz)],
        expected.map((j) => query![j]!),
      );
      assert.deepEqual(
        [...q.columns.subarray(0, q.nnz)],
        expected.map((j) => j * CHUNK_ROWS),
      );
    }
  });

  test('when chunks are summed by the brute-force pass, then every row sum equals the scalar dot product to the bit', () => {
    // Two full chunks and part of a third; 13 non-zero query dimensions (not a multiple of the
    // pass's eight), negative values included.
    const rows = vectors(2 * CHUNK_ROWS + 37, 1);
    const store = new DenseVectors(DIMENSIONS);
    store.ensureCapacity(rows.length);
    rows.forEach((v, slot) => store.write(slot, v));
    const query = new Float32Array(DIMENSIONS);
    const random = mulberry32(2);
    for (let j = 0; j < 13; j++) query[(j * 7) % DIMENSIONS] = random() * 2 - 1;
    const q = sparseQuery(query);
    assert.equal(q.nnz, 13);

    let compared = 0;
    for (let c = 0; c < store.chunks.length; c++) {
      const count = Math.min(CHUNK_ROWS, rows.length - c * CHUNK_ROWS);
      const sums = new Float64Array(count);
      store.dotChunk(c, count, q, sums);
      for (let r = 0; r < count; r++) {
        const v = rows[c * CHUNK_ROWS + r]!;
        // The scalar reference: ascending dimensions, in doubles.
        let expected = 0;
        for (let i = 0; i < q.nnz; i++) expected += q.val[i]! * v[q.idx[i]!]!;
        assert.ok(
          Object.is(sums[r], expected),
          `row ${c * CHUNK_ROWS + r}: ${sums[r]} vs ${expected}`,
        );
        assert.ok(Object.is(store.dot(c * CHUNK_ROWS + r, q), expected));
        compared++;
      }
    }
    assert.equal(compared, rows.length);
  });

  test('when the candidates’ cosines are taken a column at a time, then each equals dot of its slot to the bit, float32 and int8', () => {
    const rows = vectors(2 * CHUNK_ROWS + 37, 4);
    const query = new Float32Array(DIMENSIONS);
    const random = mulberry32(5);
    for (let j = 0; j < 11; j++) query[(j * 5) % DIMENSIONS] = random() * 2 - 1;
    const q = sparseQuery(query);
    // Ascending slots from all three chunks, with gaps, the first and the last slot included.
    const slots = Int32Array.from({ length: rows.length }, (_, slot) => slot).filter(
      (slot) => slot === 0 || slot === rows.length - 1 || random() < 0.1,
    );
    for (const quantized of [false, true]) {
      const store = new DenseVectors(DIMENSIONS);
      store.ensureCapacity(rows.length);
      rows.forEach((v, slot) => store.write(slot, v));
      if (quantized) store.quantize(rows.length, new Uint8Array(rows.length).fill(1));
      const sums = new Float64Array(slots.length);
      store.dotSlots(slots, q, sums);
      slots.forEach((slot, k) =>
        assert.ok(Object.is(sums[k], store.dot(slot, q)), `slot ${slot}, int8 ${quantized}`),
      );
    }
  });

  test('when an organization is quantized, then its float32 vectors are re-encoded as int8 and new ones follow', () => {
    const rows = vectors(CHUNK_ROWS + 5, 3);
    const store = new DenseVectors(DIMENSIONS);
    store.ensureCapacity(rows.length + 1);
    rows.forEach((v, slot) => store.write(slot, v));
    assert.deepEqual(store.read(CHUNK_ROWS + 4), rows[CHUNK_ROWS + 4]);
    store.quantize(rows.length, new Uint8Array(rows.length).fill(1));
    store.write(rows.length, rows[0]!);
    for (const slot of [0, CHUNK_ROWS - 1, CHUNK_ROWS + 4, rows.length]) {
      const v = rows[slot % rows.length]!;
      const back = store.read(slot);
      const scale = store.scales[slot]!;
      for (let j = 0; j < DIMENSIONS; j++)
        assert.ok(Math.abs(back[j]! - v[j]!) <= scale / 2 + 1e-7, `slot ${slot}, component ${j}`);
    }
    assert.equal(store.chunks.length, 2);
  });
});
