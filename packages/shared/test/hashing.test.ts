// fnv1a: triage's n-gram buckets, digest's lexical embeddings and knowledge's term ids (stored
// in its indexes) depend on its exact values, so they are pinned to FNV-1a's reference vectors.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { fnv1a } from '../src/index.js';

test('when hashed with the default seed, then the FNV-1a 32-bit reference values come out', () => {
  assert.equal(fnv1a(''), 0x811c9dc5);
  assert.equal(fnv1a('a'), 0xe40c292c);
  assert.equal(fnv1a('foobar'), 0xbf9cf968);
});

test('when a seed is given, then it replaces the offset basis; the result is an unsigned 32-bit integer', () => {
  assert.equal(fnv1a('foobar', 0x811c9dc5), fnv1a('foobar'));
  assert.notEqual(fnv1a('foobar', 1), fnv1a('foobar'));
  for (const seed of [0, 1, 0xffffffff, -1]) {
    const h = fnv1a('naïve café 😀', seed);
    assert.ok(Number.isInteger(h) && h >= 0 && h < 2 ** 32, `${seed}: ${h}`);
  }
  assert.equal(fnv1a('x', -1), fnv1a('x', 0xffffffff)); // seeds are taken modulo 2^32
});
