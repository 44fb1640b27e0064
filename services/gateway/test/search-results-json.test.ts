// The search results passthrough: the JSON written from a SearchResponse's protobuf bytes is
// byte for byte what JSON.stringify makes of the decoded message, for any text (escapes,
// non-ASCII, empty), any score and any number of hits; bytes that are not a SearchResponse
// are refused, and text that is not UTF-8 is left to the decoding path. A SearchBatchResponse's
// bytes split into its items: a succeeded item reads as the SearchResponse of its hits, a
// failed one is told apart by its error code.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { BinaryWriter } from '@bufbuild/protobuf/wire';
import { knowledge } from '@support-agent/proto';
import fc from 'fast-check';
import {
  MalformedSearchResponse,
  searchBatchItems,
  searchResultsJson,
} from '../src/data-access/grpc/search-results-json.js';
import { searchResultsOf } from '../src/domain/agent-operations.js';

const encode = (response: knowledge.SearchResponse): Buffer =>
  Buffer.from(knowledge.SearchResponse.encode(response).finish());

const expected = (bytes: Buffer): string =>
  JSON.stringify(searchResultsOf(knowledge.SearchResponse.decode(bytes)));

const hit = fc.record({
  entryId: fc.string(),
  question: fc.oneof(fc.string(), fc.string({ unit: 'grapheme' }), fc.string({ unit: 'binary' })),
  answer: fc.oneof(fc.string(), fc.string({ unit: 'grapheme' }), fc.string({ unit: 'binary' })),
  score: fc.oneof(fc.double(), fc.double({ min: 0, max: 1 }), fc.constant(0)),
});

test('when hits carry any text and score, then the JSON equals JSON.stringify of the decoded hits', () => {
  fc.assert(
    fc.property(fc.array(hit, { maxLength: 25 }), (results) => {
      const bytes = encode({ results });
      const json = searchResultsJson(bytes);
      // Lone surrogates are not UTF-8 once encoded: that text goes through decoding instead.
      if (json === undefined) return;
      assert.equal(json.toString('utf8'), expected(bytes));
    }),
    { numRuns: 500 },
  );
});

test('when text needs every kind of JSON escape, then each is written as JSON.stringify writes it', () => {
  const controls = Array.from({ length: 32 }, (_, i) => String.fromCharCode(i)).join('');
  const results = [
    {
      entryId: 'a',
      question: `q "quoted" \\ back${controls}`,
      answer: 'é ü 日本 🎉 \u2028',
      score: 0.5,
    },
    { entryId: 'b', question: '', answer: '', score: 0 },
  ];
  const bytes = encode({ results });
  assert.equal(searchResultsJson(bytes)!.toString('utf8'), expected(bytes));
  assert.equal(searchResultsJson(encode({ results: [] }))!.toString(), '{"results":[]}');
});

test('when fields are missing, repeated, unknown or out of order, then proto3 decoding rules apply', () => {
  const w = new BinaryWriter();
  w.uint32(99 << 3).uint32(7); // unknown varint field at the top level
  w.uint32(10).fork();
  w.uint32((4 << 3) | 1).double(0.25); // score before the text
  w.uint32((3 << 3) | 2).string('first answer');
  w.uint32((2 << 3) | 2).string('question');
  w.uint32((3 << 3) | 2).string('last answer wins');
  w.uint32((9 << 3) | 5).fixed32(1); // unknown fixed32
  w.uint32((2 << 3) | 0).uint32(5); // a known number with the wrong wire type is skipped
  w.join();
  w.uint32(10).fork().join(); // an empty hit: every field at its default
  const bytes = Buffer.from(w.finish());
  assert.equal(searchResultsJson(bytes)!.toString('utf8'), expected(bytes));
  assert.match(expected(bytes), /last answer wins.*"question":"","answer":"","score":0/);
});

test('when a hit holds bytes that are not UTF-8, then the passthrough leaves it to decoding', () => {
  const w = new BinaryWriter();
  w.uint32(10)
    .fork()
    .uint32((2 << 3) | 2)
    .bytes(Buffer.from([0x61, 0xff, 0x62]))
    .join();
  assert.equal(searchResultsJson(Buffer.from(w.finish())), undefined);
});

test('when the bytes are truncated or not protobuf, then MalformedSearchResponse is thrown', () => {
  const bytes = encode({ results: [{ entryId: 'a', question: 'q', answer: 'a', score: 1 }] });
  for (let cut = 1; cut < bytes.length; cut++) {
    assert.throws(() => searchResultsJson(bytes.subarray(0, cut)), MalformedSearchResponse);
  }
  assert.throws(() => searchResultsJson(Buffer.from([0x0b])), MalformedSearchResponse);
  assert.throws(() => searchResultsJson(Buffer.from([0x80, 0x80])), MalformedSearchResponse);
});

const batchResult = fc.oneof(
  fc.record({ results: fc.array(hit, { maxLength: 5 }) }),
  fc.record({
    results: fc.constant<knowledge.SearchHit[]>([]),
    errorCode: fc.constantFrom('invalid_request', 'service_unavailable', 'internal_error'),
    errorMessage: fc.string(),
    errorParam: fc.string(),
    errorRetryAfter: fc.nat(),
  }),
);

test('when a SearchBatchResponse is split, then each item is its search as a SearchResponse or its failure, in order', () => {
  fc.assert(
    fc.property(fc.array(batchResult, { maxLength: 12 }), (results) => {
      const full = results.map((r): knowledge.SearchBatchResult => ({
        errorCode: '',
        errorMessage: '',
        errorParam: '',
        errorRetryAfter: 0,
        ...r,
      }));
      const bytes = Buffer.from(knowledge.SearchBatchResponse.encode({ results: full }).finish());
      const items = searchBatchItems(bytes);
      assert.equal(items.length, full.length);
      items.forEach((item, i) => {
        const want = full[i]!;
        if (want.errorCode === '') {
          assert.ok('ok' in item);
          const json = searchResultsJson(item.ok);
          const alone = encode({ results: want.results });
          if (json !== undefined) assert.equal(json.toString('utf8'), expected(alone));
        } else {
          assert.ok('failed' in item);
          assert.deepEqual(knowledge.SearchBatchResult.decode(item.failed), want);
        }
      });
    }),
    { numRuns: 300 },
  );
});

test('when an item repeats its error code, then the last value decides whether it failed', () => {
  const item = (codes: string[]) => {
    const w = new BinaryWriter();
    w.uint32(10).fork();
    for (const code of codes) w.uint32((2 << 3) | 2).string(code);
    w.join();
    return searchBatchItems(Buffer.from(w.finish()))[0]!;
  };
  assert.ok('failed' in item(['', 'internal_error']));
  assert.ok('ok' in item(['internal_error', '']));
  assert.ok('ok' in item([]));
});

test('when batch bytes are truncated or not protobuf, then MalformedSearchResponse is thrown', () => {
  const bytes = Buffer.from(
    knowledge.SearchBatchResponse.encode({
      results: [
        {
          results: [{ entryId: 'a', question: 'q', answer: 'a', score: 1 }],
          errorCode: '',
          errorMessage: '',
          errorParam: '',
          errorRetryAfter: 0,
        },
      ],
    }).finish(),
  );
  for (let cut = 1; cut < bytes.length; cut++) {
    assert.throws(() => {
      // A cut inside a hit is found when the hit is read, as the gateway reads it.
      for (const item of searchBatchItems(bytes.subarray(0, cut)))
        if ('ok' in item) searchResultsJson(item.ok);
    }, MalformedSearchResponse);
  }
});
