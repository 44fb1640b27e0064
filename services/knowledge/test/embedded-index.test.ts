// Persistence of the embedded index: journal segments, start-up compaction into a
// new generation, torn last lines, and the single-writer lock.
import assert from 'node:assert/strict';
import {
  appendFileSync,
  existsSync,
  readdirSync,
  readFileSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import {
  EmbeddedIndex,
  type EmbeddedIndexOptions,
} from '../src/data-access/embedded-index/index.js';
import { JournalReader } from '../src/data-access/embedded-index/journal-reader.js';
import { HashedEmbeddings } from '../src/data-access/hashed-embeddings.js';
import {
  bm25Score,
  documentTerms,
  queryTerms,
  sparseValue,
  termIdfs,
} from '../src/domain/scoring.js';
import { searchEntries, type KnowledgeDeps } from '../src/domain/search.js';
import { countEntries, deleteEntries, upsertEntries } from '../src/domain/upsert.js';
import { silentLogger, tempDir } from './support/fixtures.js';

const embeddings = new HashedEmbeddings(64);
const COLLECTION = 'kb_v1_hashed_hashed-v1_64';

async function open(
  dir: string,
  extra: Partial<EmbeddedIndexOptions> = {},
): Promise<{ index: EmbeddedIndex; deps: KnowledgeDeps }> {
  const index = new EmbeddedIndex({ dir, collection: COLLECTION, dimensions: 64, ...extra });
  await index.init();
  return { index, deps: { index, embeddings, logger: silentLogger, now: Date.now } };
}

const entry = (i: number, version = 0) => ({
  id: `e${i}`,
  question: `How do I configure widget number ${i}?`,
  answer: `Open the widget ${i} panel and set option ${i + version}.`,
  tags: [],
});

describe('embedded index persistence', () => {
  it('when writes fill several journal segments, then a reopened index replays them all', async () => {
    const dir = tempDir('kb-embedded-');
    try {
      const { index, deps } = await open(dir.path, { segmentRecords: 2 });
      for (let i = 0; i < 10; i++) await upsertEntries(deps, 'acme', [entry(i)]);
      await deleteEntries(deps, 'acme', ['e3']);
      await index.close();
      const segments = readdirSync(join(dir.path, COLLECTION, 'gen-000001'));
      assert.ok(segments.length >= 5, `${segments.length} segments`);

      const reopened = await open(dir.path, { segmentRecords: 2 });
      assert.equal(await countEntries(reopened.deps, 'acme'), 9);
      const results = await searchEntries(reopened.deps, {
        orgId: 'acme',
        query: 'configure widget number 7',
      });
      assert.equal(results[0]?.entryId, 'e7');
      await reopened.index.close();
    } finally {
      dir.remove();
    }
  });

  it('when the journal holds mostly superseded records, then start-up compacts it into a new generation', async () => {
    const dir = tempDir('kb-embedded-');
    try {
      const { index, deps } = await open(dir.path);
      for (let v = 0; v < 5; v++) await upsertEntries(deps, 'acme', [entry(1, v), entry(2, v)]);
      await index.close();

      const compacted = await open(dir.path, { compactionSlack: 0 });
      assert.equal(
        readFileSync(join(dir.path, COLLECTION, 'CURRENT'), 'utf8').trim(),
        'gen-000002',
      );
      assert.ok(
        !existsSync(join(dir.path, COLLECTION, 'gen-000001')),
        'the old generation is removed',
      );
      assert.equal(await countEntries(compacted.deps, 'acme'), 2);
      // Writes after compaction land in the new generation and survive another restart.
      await upsertEntries(compacted.deps, 'acme', [entry(3)]);
      await compacted.index.close();

      const again = await open(dir.path, { compactionSlack: 0 });
      assert.equal(await countEntries(again.deps, 'acme'), 3);
      const [top] = await searchEntries(again.deps, { orgId: 'acme', query: 'widget 2 option 6' });
      assert.equal(top?.entryId, 'e2');
      assert.match(top!.answer, /option 6/, 'the latest version survived compaction');
      await again.index.close();
    } finally {
      dir.remove();
    }
  });

  it('when the process crashed mid-write, then the torn last record is ignored and the rest loads', async () => {
    const dir = tempDir('kb-embedded-');
    try {
      const { index, deps } = await open(dir.path);
      await upsertEntries(deps, 'acme', [entry(1), entry(2)]);
      await index.close();
      appendFileSync(
        join(dir.path, COLLECTION, 'gen-000001', 'segment-000001.jsonl'),
        '{"t":"put","o":"acme","id":"e9","q":"Tor',
      );

      const reopened = await open(dir.path);
      assert.equal(await countEntries(reopened.deps, 'acme'), 2);
      await upsertEntries(reopened.deps, 'acme', [entry(3)]);
      await reopened.index.close();
      const last = await open(dir.path);
      assert.equal(await countEntries(last.deps, 'acme'), 3);
      await last.index.close();
    } finally {
      dir.remove();
    }
  });

  it('when another live process holds the collection, then opening it for writing is refused', async () => {
    const dir = tempDir('kb-embedded-');
    try {
      const { index } = await open(dir.path);
      await index.close();
      assert.ok(!existsSync(join(dir.path, COLLECTION, 'LOCK')), 'close releases the lock');
      writeFileSync(join(dir.path, COLLECTION, 'LOCK'), `${process.ppid}\n`);
      await assert.rejects(open(dir.path), /in use by process/);
      // A lock left by a process that no longer exists is taken over.
      writeFileSync(join(dir.path, COLLECTION, 'LOCK'), '999999999\n');
      const { index: reopened } = await open(dir.path);
      await reopened.close();
    } finally {
      dir.remove();
    }
  });

  it('when the stored vectors have another size, then the index refuses to open', async () => {
    const dir = tempDir('kb-embedded-');
    try {
      const { index } = await open(dir.path);
      await index.close();
      const wrong = new EmbeddedIndex({ dir: dir.path, collection: COLLECTION, dimensions: 128 });
      await assert.rejects(wrong.init(), /64 dimensions/);
    } finally {
      dir.remove();
    }
  });

  it('when a large organization spills its int8 vectors to a file, then search, compaction and reopening match an index that keeps them in memory', async () => {
    const spilled = tempDir('kb-spill-');
    const inMemory = tempDir('kb-nospill-');
    // Quantized from 100 entries; a budget large enough that the brute-force dense pass
    // also runs over the spilled chunks.
    const options = { quantizeAbove: 100, exactDenseBudget: 1e9 };
    const words = ['alpha', 'bravo', 'charlie', 'delta', 'echo', 'foxtrot', 'golf', 'hotel'];
    const big = (i: number) => ({
      id: `b${i}`,
      question: `${words[i % 8]} ${words[(i >> 3) % 8]} widget ${i}?`,
      answer: `Turn the ${words[(i >> 6) % 8]} dial ${i % 17} times.`,
      tags: [],
    });
    const queries = [
      'alpha bravo widget',
      'turn the golf dial',
      'echo hotel 7 times',
      'widget 2048',
    ];
    const vectorFiles = () => readdirSync(join(spilled.path, COLLECTION, 'vectors'));
    try {
      const a = await open(spilled.path, options);
      const b = await open(inMemory.path, { ...options, spillVectors: false });
      const same = async (what: string) => {
        for (const query of queries) {
          const x = await searchEntries(a.deps, { orgId: 'big', query, limit: 10 });
          const y = await searchEntries(b.deps, { orgId: 'big', query, limit: 10 });
          assert.ok(x.length > 0, `${what}: results for ${query}`);
          assert.deepEqual(x, y, `${what}: ${query}`);
        }
      };
      for (let i = 0; i < 2500; i += 500) {
        const batch = Array.from({ length: 500 }, (_, j) => big(i + j));
        await upsertEntries(a.deps, 'big', batch);
        await upsertEntries(b.deps, 'big', batch);
      }
      // Two full chunks of 1024 rows × 64 bytes are in the file, the third is in memory.
      const [file] = vectorFiles();
      assert.equal(vectorFiles().length, 1);
      assert.equal(statSync(join(spilled.path, COLLECTION, 'vectors', file!)).size, 2 * 1024 * 64);
      await same('after the import');

      // Deleting most entries compacts the organization into a new index and spill file.
      // Deleting 1,300 of 2,500 (more dead than live) compacts the organization into a new
      // index of 1,200 entries: one full chunk, in a new spill file.
      for (const [from, n] of [
        [0, 1000],
        [1000, 300],
      ]) {
        const gone = Array.from({ length: n! }, (_, j) => `b${from! + j}`);
        await deleteEntries(a.deps, 'big', gone);
        await deleteEntries(b.deps, 'big', gone);
      }
      assert.equal(await countEntries(a.deps, 'big'), 1200);
      assert.deepEqual(vectorFiles().length, 1, 'the old spill file is removed');
      assert.notEqual(vectorFiles()[0], file);
      const compactedFile = join(spilled.path, COLLECTION, 'vectors', vectorFiles()[0]!);
      assert.equal(statSync(compactedFile).size, 1024 * 64);
      await same('after compaction');

      await a.index.close();
      assert.deepEqual(vectorFiles(), [], 'close removes the spill files');
      const reopened = await open(spilled.path, options);
      a.deps = reopened.deps;
      a.index = reopened.index;
      await same('after reopening');
      await a.index.close();
      await b.index.close();
    } finally {
      spilled.remove();
      inMemory.remove();
    }
  });
});

describe('embedded index lexical candidates', () => {
  for (const [way, accumulateUpTo] of [
    ['pruned (MaxScore)', 0],
    ['accumulated', Infinity],
  ] as const)
    it(`when a query mixes a word most entries hold with rare ones, then the ${way} top k is exactly the k best by BM25, dead entries left out, and each candidate's BM25 is the query-order sum`, async () => {
      const dir = tempDir('kb-lexical-');
      try {
        const { index, deps } = await open(dir.path, { lexicalAccumulateUpTo: accumulateUpTo });
        // Every entry says "widget"; every 7th "gizmo", every 11th "sprocket"; answers of
        // different lengths give every entry its own weights (no ties at the k-th place).
        const entries = Array.from({ length: 400 }, (_, i) => ({
          id: `w${i}`,
          question: `widget ${i % 7 === 0 ? 'gizmo' : ''} ${i % 11 === 0 ? 'sprocket' : ''} question ${i}`,
          answer: `answer ${'filler '.repeat(i % 37)}${i % 5 === 0 ? 'gizmo' : ''}`,
          tags: [],
        }));
        await upsertEntries(deps, 'acme', entries);
        await deleteEntries(deps, 'acme', ['w0', 'w77']);
        const terms = queryTerms('widget gizmo sprocket');
        const exhaustive = await index.candidates({
          orgId: 'acme',
          dense: null,
          terms,
          limit: 1000,
        });
        assert.equal(exhaustive.size, 398, 'every live entry holds "widget"');
        // The reference: BM25 from each live entry's own sparse vector (its weights as float32,
        // as the index keeps them), terms in query order.
        const live = entries.filter((e) => e.id !== 'w0' && e.id !== 'w77');
        const vectors = new Map(live.map((e) => [e.id, documentTerms(e).sparse]));
        const idfs = termIdfs(terms, {
          docCount: live.length,
          documentFrequency: new Map(
            terms.map((t) => [
              t.id,
              live.filter((e) => sparseValue(vectors.get(e.id)!, t.id) > 0).length,
            ]),
          ),
        });
        const bm25Of = (id: string) =>
          bm25Score(terms, idfs, (t) => Math.fround(sparseValue(vectors.get(id)!, terms[t]!.id)));
        for (let k = 0; k < exhaustive.size; k++) {
          const id = exhaustive.idOf(k);
          assert.ok(Object.is(exhaustive.bm25[k], bm25Of(id)), `${id}'s BM25, to the bit`);
        }
        const best = live
          .map((e) => ({ id: e.id, score: bm25Of(e.id) }))
          .sort((a, b) => b.score - a.score);
        for (const k of [1, 10, 50]) {
          assert.ok(best[k - 1]!.score > best[k]!.score, `no tie at place ${k}`);
          const pruned = await index.candidates({ orgId: 'acme', dense: null, terms, limit: k });
          assert.deepEqual(
            Array.from({ length: pruned.size }, (_, i) => pruned.idOf(i)).sort(),
            best
              .slice(0, k)
              .map((b) => b.id)
              .sort(),
          );
        }
        await index.close();
      } finally {
        dir.remove();
      }
    });
});

describe('embedded index dense candidates', () => {
  // The entry shares no word with the query, only character n-grams ("spredsheet" /
  // "spreadsheet"): only the dense pass can find it.
  const misspelt = {
    id: 'typo',
    question: 'Spredsheet keeps crashing',
    answer: 'Save more often.',
    tags: [],
  };
  const fillers = Array.from({ length: 30 }, (_, i) => ({
    id: `f${i}`,
    question: `Why is the formula in cell ${i} wrong?`,
    answer: `Check cell ${i}.`,
    tags: [],
  }));
  const ids = (set: { size: number; idOf(k: number): string }) =>
    Array.from({ length: set.size }, (_, k) => set.idOf(k));

  it('when the words find fewer entries than asked for, then the dense pass adds the nearest ones; when they find enough, then the candidates are the words’ matches', async () => {
    const dir = tempDir('kb-dense-');
    try {
      const { index, deps } = await open(dir.path);
      await upsertEntries(deps, 'acme', [misspelt, ...fillers]);
      const query = 'spreadsheet formula';
      const terms = queryTerms(query);
      const dense = await embeddings.embedQuery(query);
      const lexicalOnly = ids(
        await index.candidates({ orgId: 'acme', dense: null, terms, limit: 50 }),
      );
      assert.ok(!lexicalOnly.includes('typo'), 'no shared stemmed word');

      // 50 asked for, the words find the 30 fillers: the dense pass fills up with the typo.
      const few = ids(await index.candidates({ orgId: 'acme', dense, terms, limit: 50 }));
      assert.ok(few.includes('typo'));
      // 10 asked for and found by the words: no brute-force pass, the typo is not a candidate.
      const enough = ids(await index.candidates({ orgId: 'acme', dense, terms, limit: 10 }));
      assert.equal(enough.length, 10);
      assert.ok(!enough.includes('typo'));
      await index.close();
    } finally {
      dir.remove();
    }
  });
});

describe('embedded index search results', () => {
  it('when an entry’s text imitates the journal’s field layout, then search returns its text exactly', async () => {
    const dir = tempDir('kb-text-');
    try {
      const { index, deps } = await open(dir.path);
      const tricky = {
        id: 'tricky',
        question: 'Why does my export show ,"u":1} in the header?',
        answer: 'Quotes " and ,"u": and \\ and émojis 🙂 are kept; "g":["x"],"u":5 too.',
        tags: ['csv,"u":', 'export'],
      };
      await upsertEntries(deps, 'acme', [tricky, entry(1)]);
      const [hit] = await searchEntries(deps, { orgId: 'acme', query: 'export header' });
      assert.equal(hit?.entryId, 'tricky');
      assert.equal(hit.question, tricky.question);
      assert.equal(hit.answer, tricky.answer);
      await index.close();
    } finally {
      dir.remove();
    }
  });

  it('when results are read again, then their text comes from memory until the byte bound pushes it out', () => {
    const lines = new Map<number, Buffer>();
    const reads: number[] = [];
    const at = (i: number) => ({ segment: 1, offset: i * 1000, length: 0 });
    for (let i = 0; i < 4; i++) {
      const record = { t: 'put', o: 'acme', id: `e${i}`, q: `Q${i}`, a: 'x'.repeat(400), g: [] };
      lines.set(i * 1000, Buffer.from(`${JSON.stringify(record).slice(0, -1)},"u":1}`));
    }
    const line = (p: { offset: number }) => {
      reads.push(p.offset / 1000);
      return lines.get(p.offset)!;
    };
    // Room for two of these records (≈ 1.1 KB each as counted).
    const reader = new JournalReader(line, 2400);
    assert.equal(reader.text(at(0)).q, 'Q0');
    assert.equal(reader.text(at(0)).id, 'e0');
    assert.deepEqual(reads, [0], 'the second read is served from memory');
    reader.text(at(1));
    reader.text(at(2));
    assert.equal(reader.text(at(0)).q, 'Q0');
    assert.deepEqual(reads, [0, 1, 2, 0], 'the least recently used text went out first');
    assert.throws(() => (reader.text(at(0)).g as string[]).push('x'), 'kept tags cannot change');

    const uncached = new JournalReader(line, 0);
    uncached.text(at(3));
    uncached.text(at(3));
    assert.deepEqual(reads.slice(4), [3, 3], 'without a bound every read goes to the journal');
  });
});
