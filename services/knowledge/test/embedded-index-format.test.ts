// The embedded index's files are a contract with every existing DATA_DIR: what the
// pre-split adapter wrote (test/fixtures/embedded-index-v1, see its README) must load,
// and today's adapter must write the same bytes. Plus recovery from what a crash leaves.
import assert from 'node:assert/strict';
import {
  appendFileSync,
  cpSync,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, it } from 'node:test';
import {
  EmbeddedIndex,
  type EmbeddedIndexOptions,
} from '../src/data-access/embedded-index/index.js';
import type { StoredEntry } from '../src/domain/ports.js';
import { compareIds, dot } from '../src/domain/scoring.js';
import {
  HISTORY_COLLECTION as COLLECTION,
  HISTORY_DIMENSIONS,
  HISTORY_SEGMENT_RECORDS,
  historyVectors,
  writeHistory,
} from './support/index-history.js';
import { tempDir } from './support/fixtures.js';

const FIXTURES = fileURLToPath(new URL('./fixtures/embedded-index-v1/', import.meta.url));

async function open(dir: string, extra: Partial<EmbeddedIndexOptions> = {}) {
  const index = new EmbeddedIndex({
    dir,
    collection: COLLECTION,
    dimensions: HISTORY_DIMENSIONS,
    segmentRecords: HISTORY_SEGMENT_RECORDS,
    ...extra,
  });
  await index.init();
  return index;
}

/** Every file under `dir` (relative path → bytes). */
function filesUnder(dir: string): Map<string, Buffer> {
  const out = new Map<string, Buffer>();
  const walk = (d: string) => {
    for (const e of readdirSync(d, { withFileTypes: true })) {
      const path = join(d, e.name);
      if (e.isDirectory()) walk(path);
      else out.set(relative(dir, path), readFileSync(path));
    }
  };
  walk(dir);
  return out;
}

/** A copy of a fixture phase in a temporary DATA_DIR/knowledge. */
function copyOf(phase: 1 | 2) {
  const dir = tempDir('kb-format-');
  cpSync(join(FIXTURES, `phase-${phase}`), dir.path, { recursive: true });
  return dir;
}

/** The history's expected live entries after `phases`, written by today's adapter elsewhere. */
async function expectedAfter(phases: 1 | 2): Promise<Map<string, StoredEntry[]>> {
  const dir = tempDir('kb-format-expected-');
  try {
    return await writeHistory((extra) => open(dir.path, extra), phases);
  } finally {
    dir.remove();
  }
}

/** Checks that `index` holds exactly `expected`: text, versions, vectors, search. */
async function assertHolds(index: EmbeddedIndex, expected: Map<string, StoredEntry[]>) {
  assert.deepEqual(await index.listOrgs(), [...expected.keys()].sort(compareIds));
  for (const [org, entries] of expected) {
    const sorted = [...entries].sort((a, b) => compareIds(a.id, b.id));
    assert.equal(await index.count(org), entries.length);
    assert.deepEqual((await index.scroll(org, undefined, 100)).entries, sorted);
    const versions = await index.versions(
      org,
      sorted.map((e) => e.id),
    );
    for (const e of sorted)
      assert.deepEqual(versions.get(e.id), { contentHash: e.contentHash, updatedAt: e.updatedAt });
  }
  // Each entry is found by its own term, with the vectors the history wrote for it.
  for (const e of expected.get('acme')!) {
    const seed = Number(e.id.slice(1)) * 10 + Number(/option (\d+)/.exec(e.answer)![1]);
    const set = await index.candidates({
      orgId: 'acme',
      dense: historyVectors.dense(seed),
      terms: [{ term: 'own', id: 100 + seed, count: 1 }],
      limit: 1,
    });
    const k = Array.from({ length: set.size }, (_, i) => set.idOf(i)).indexOf(e.id);
    assert.ok(k >= 0, `${e.id} is a candidate for its own term`);
    const own = set.candidate(k);
    assert.equal(own.entry.question, e.question);
    // The query is the entry's own vector: its cosine is exactly the dot product of the two.
    const v = historyVectors.dense(seed);
    assert.equal(own.cosine, dot(v, v));
    assert.ok(set.bm25[k]! > 0, 'its weight for its own term is read');
    assert.equal(set.documentFrequency.get(100 + seed), 1);
  }
}

describe('embedded index on-disk format', () => {
  for (const phase of [1, 2] as const) {
    it(`when a data directory written by the pre-split adapter (phase ${phase}) is opened, then every entry, version and vector loads`, async () => {
      const dir = copyOf(phase);
      try {
        const expected = await expectedAfter(phase);
        const index = await open(dir.path);
        await assertHolds(index, expected);
        // And it keeps working: a write lands and survives a restart.
        await index.delete('acme', ['a3']);
        await index.close();
        const reopened = await open(dir.path);
        assert.equal(await reopened.count('acme'), expected.get('acme')!.length - 1);
        await reopened.close();
      } finally {
        dir.remove();
      }
    });

    it(`when today's adapter writes the same history (phase ${phase}), then its files are byte-identical to the pre-split ones`, async () => {
      const dir = tempDir('kb-format-');
      try {
        await writeHistory((extra) => open(dir.path, extra), phase);
        const written = filesUnder(dir.path);
        const fixture = filesUnder(join(FIXTURES, `phase-${phase}`));
        assert.deepEqual([...written.keys()].sort(), [...fixture.keys()].sort());
        for (const [path, bytes] of fixture)
          assert.ok(bytes.equals(written.get(path)!), `${path} differs`);
      } finally {
        dir.remove();
      }
    });
  }

  it('when a collection is opened read-only, then not a byte of it changes, torn line included', async () => {
    const dir = copyOf(1);
    try {
      const segment = join(dir.path, COLLECTION, 'gen-000001', 'segment-000004.jsonl');
      appendFileSync(segment, '{"t":"put","o":"acme","id":"torn');
      const before = filesUnder(dir.path);
      const index = await open(dir.path, { readOnly: true });
      await assertHolds(index, await expectedAfter(1));
      await index.close();
      assert.deepEqual(filesUnder(dir.path), before);
    } finally {
      dir.remove();
    }
  });
});

describe('embedded index crash recovery', () => {
  it('when a crash cut a batch short (whole lines, then a partial one), then the whole lines load, the rest is cut off and writes go to a fresh segment', async () => {
    const dir = copyOf(1);
    try {
      const gen = join(dir.path, COLLECTION, 'gen-000001');
      const last = join(gen, 'segment-000004.jsonl');
      const sizeBefore = statSync(last).size;
      // Two records of one batch in the documented format: the first complete, the second torn.
      const line = (id: string) =>
        readFileSync(last, 'utf8').trim().replace('"id":"a1"', `"id":"${id}"`);
      const whole = line('b1');
      appendFileSync(last, `${whole}\n${line('b2').slice(0, 40)}`);

      const index = await open(dir.path);
      const expected = await expectedAfter(1);
      assert.equal(await index.count('acme'), expected.get('acme')!.length + 1);
      assert.equal((await index.versions('acme', ['b1', 'b2'])).size, 1, 'b1 loaded, b2 not');
      assert.equal(statSync(last).size, sizeBefore + Buffer.byteLength(whole) + 1);
      assert.ok(readFileSync(last, 'utf8').endsWith('\n'));
      await index.delete('acme', ['b1']);
      await index.close();
      assert.ok(
        existsSync(join(gen, 'segment-000005.jsonl')),
        'the torn segment is not appended to',
      );
      assert.equal(statSync(last).size, sizeBefore + Buffer.byteLength(whole) + 1);

      const reopened = await open(dir.path);
      await assertHolds(reopened, expected);
      await reopened.close();
    } finally {
      dir.remove();
    }
  });

  it('when a compaction crashed before switching CURRENT, then the old generation stays in use and the leftover is overwritten by the next compaction', async () => {
    const dir = copyOf(1);
    try {
      const leftover = join(dir.path, COLLECTION, 'gen-000002');
      mkdirSync(leftover);
      writeFileSync(join(leftover, 'segment-000001.jsonl'), '{"t":"put","o":"acme","id":"half');
      const expected = await expectedAfter(1);

      const index = await open(dir.path);
      await assertHolds(index, expected);
      await index.close();
      assert.ok(!existsSync(join(dir.path, COLLECTION, 'CURRENT')));

      const compacted = await open(dir.path, { compactionSlack: 0 });
      await assertHolds(compacted, expected);
      await compacted.close();
      assert.equal(readFileSync(join(dir.path, COLLECTION, 'CURRENT'), 'utf8'), 'gen-000002\n');
      assert.ok(!existsSync(join(dir.path, COLLECTION, 'gen-000001')));
      const reopened = await open(dir.path);
      await assertHolds(reopened, expected);
      await reopened.close();
    } finally {
      dir.remove();
    }
  });
});
