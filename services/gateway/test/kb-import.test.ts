// Unit tests of the KB import pieces: entry validation, batching and line mapping, request body
// rows, the CLI's JSON-array splitter, the demo KB and its background loader.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { knowledge } from '@support-agent/proto';
import { AppError, createLogger } from '@support-agent/shared';
import { jsonArrayElements } from '../src/cli/kb-import.js';
import { DEMO_KB } from '../src/domain/demo-kb.js';
import { DemoKbSeeder, type DemoKbTarget } from '../src/domain/demo-kb-seeder.js';
import {
  importKbEntries,
  KB_UPSERT_BATCH,
  parseKbEntry,
  type KbImportRow,
  type KbWriter,
} from '../src/domain/kb-import.js';
import { parseKbImportRows } from '../src/entry-points/admin/kb-import-body.js';

const silent = createLogger('test', 'silent');

/** Records every batch and answers like the knowledge service (ids ending in "!" fail). */
function recordingWriter(known = new Set<string>()) {
  const batches: knowledge.KbEntry[][] = [];
  const writer: KbWriter = {
    async upsertEntries(req) {
      batches.push(req.entries);
      const res: knowledge.UpsertEntriesResponse = { inserted: 0, updated: 0, failed: [] };
      req.entries.forEach((e, index) => {
        if (e.answer.endsWith('!')) return void res.failed.push({ index, message: 'refused' });
        if (known.has(e.id)) res.updated++;
        else res.inserted++;
        known.add(e.id);
      });
      return res;
    },
  };
  return { writer, batches, known };
}

const row = (line: number, value: unknown): KbImportRow => ({ line, value });
const valid = (id: string, answer = 'An answer.') => ({ id, question: `Q ${id}?`, answer });

describe('KB entry validation', () => {
  it('when an entry is valid, then it is kept verbatim with tidy tags', () => {
    assert.deepEqual(
      parseKbEntry({
        id: 'faq-1',
        question: '  How?  ',
        answer: 'Like so.\n',
        tags: [' a ', 'b', 'a', ''],
        extra: true,
      }),
      { id: 'faq-1', question: '  How?  ', answer: 'Like so.\n', tags: ['a', 'b'] },
    );
    assert.equal(parseKbEntry({ id: 42, question: 'q', answer: 'a' }).id, '42');
    assert.deepEqual(parseKbEntry({ id: 'x', question: 'q', answer: 'a', tags: null }).tags, []);
  });

  it('when a field is missing, too long or of the wrong type, then the message names it', () => {
    const cases: Array<[unknown, RegExp]> = [
      [null, /entry must be a JSON object/],
      [[1], /entry must be a JSON object/],
      [{ question: 'q', answer: 'a' }, /^id is required$/],
      [{ id: '  ', question: 'q', answer: 'a' }, /^id is required$/],
      [{ id: 'has space', question: 'q', answer: 'a' }, /^id may hold only/],
      [{ id: '-lead', question: 'q', answer: 'a' }, /^id may hold only/],
      [{ id: 'a/b', question: 'q', answer: 'a' }, /^id may hold only/],
      [{ id: 'x'.repeat(201), question: 'q', answer: 'a' }, /^id must be at most 200/],
      [{ id: -1, question: 'q', answer: 'a' }, /^id must be a string/],
      [{ id: 'x', answer: 'a' }, /^question is required$/],
      [{ id: 'x', question: 5, answer: 'a' }, /^question must be a string$/],
      [{ id: 'x', question: '😀'.repeat(2001), answer: 'a' }, /question must be at most 2000/],
      [{ id: 'x', question: 'q', answer: ' \n ' }, /^answer is required$/],
      [{ id: 'x', question: 'q', answer: 'a'.repeat(10_001) }, /answer must be at most 10000/],
      [{ id: 'x', question: 'q', answer: 'a', tags: 'a|b' }, /tags must be an array of strings/],
      [{ id: 'x', question: 'q', answer: 'a', tags: [1] }, /tags must be an array of strings/],
      [
        {
          id: 'x',
          question: 'q',
          answer: 'a',
          tags: Array.from({ length: 21 }, (_, i) => `t${i}`),
        },
        /at most 20 tags/,
      ],
      [{ id: 'x', question: 'q', answer: 'a', tags: ['t'.repeat(51)] }, /at most 50 characters/],
    ];
    for (const [value, message] of cases) {
      assert.throws(
        () => parseKbEntry(value),
        (err: unknown) =>
          err instanceof AppError && err.code === 'invalid_request' && message.test(err.message),
        JSON.stringify(value)?.slice(0, 80),
      );
    }
    // 2000 code points of astral characters (4000 UTF-16 units) are fine.
    assert.equal(
      [...parseKbEntry({ id: 'x', question: '😀'.repeat(2000), answer: 'a' }).question].length,
      2000,
    );
  });
});

describe('importKbEntries', () => {
  it('when rows exceed a batch, then they go in batches and service failures map back to lines', async () => {
    const { writer, batches } = recordingWriter();
    const rows: KbImportRow[] = [];
    for (let i = 0; i < 600; i++) {
      // Lines leave gaps, as blank JSONL lines would.
      rows.push(row(2 * i + 1, valid(`e${i}`, i === 300 || i === 599 ? 'refused!' : 'ok')));
    }
    const result = await importKbEntries(writer, 'org', rows);
    assert.deepEqual(
      batches.map((b) => b.length),
      [
        ...Array<number>(Math.floor(600 / KB_UPSERT_BATCH)).fill(KB_UPSERT_BATCH),
        600 % KB_UPSERT_BATCH,
      ],
    );
    assert.equal(result.inserted, 598);
    assert.equal(result.updated, 0);
    assert.deepEqual(result.failed, [
      { line: 601, message: 'refused' },
      { line: 1199, message: 'refused' },
    ]);
  });

  it('when rows are invalid or ids repeat, then invalid ones are reported and the last valid row per id is sent once', async () => {
    const { writer, batches } = recordingWriter();
    const result = await importKbEntries(writer, 'org', [
      row(1, valid('a', 'first a')),
      row(2, { id: 'b' }),
      { line: 3, error: 'not valid JSON' },
      row(4, valid('c')),
      row(5, valid('a', 'second a')),
      row(6, { id: 'a', question: 'q' }), // invalid: does not replace the valid one
    ]);
    assert.deepEqual(
      batches[0]!.map((e) => [e.id, e.answer]),
      [
        ['c', 'An answer.'],
        ['a', 'second a'],
      ],
    );
    assert.deepEqual(result, {
      inserted: 2,
      updated: 0,
      failed: [
        { line: 2, message: 'question is required' },
        { line: 3, message: 'not valid JSON' },
        { line: 6, message: 'answer is required' },
      ],
    });
  });

  it('when the same rows are imported again, then they are all updated', async () => {
    const { writer } = recordingWriter();
    const rows = [row(1, valid('a')), row(2, valid('b'))];
    assert.deepEqual(await importKbEntries(writer, 'org', rows), {
      inserted: 2,
      updated: 0,
      failed: [],
    });
    assert.deepEqual(await importKbEntries(writer, 'org', rows), {
      inserted: 0,
      updated: 2,
      failed: [],
    });
  });

  it('when nothing is valid, then the service is not called', async () => {
    const { writer, batches } = recordingWriter();
    const result = await importKbEntries(writer, 'org', [row(1, {})]);
    assert.equal(batches.length, 0);
    assert.equal(result.failed.length, 1);
  });

  it('when the service fails, then the import fails with its error', async () => {
    const down: KbWriter = {
      upsertEntries: async () => {
        throw new AppError('service_unavailable', 'down');
      },
    };
    await assert.rejects(
      importKbEntries(down, 'org', [row(1, valid('a'))]),
      (err: unknown) => err instanceof AppError && err.code === 'service_unavailable',
    );
  });
});

describe('import body rows', () => {
  it('when the body is JSON lines, then rows carry their 1-based line and bad lines fail alone', async () => {
    const rows = await parseKbImportRows('\uFEFF{"id":"a"}\r\n\n  \n{oops\n[1]\n', 'jsonl');
    assert.deepEqual(rows, [
      { line: 1, value: { id: 'a' } },
      { line: 4, error: 'not valid JSON' },
      { line: 5, value: [1] },
    ]);
  });

  it('when the body is a JSON array, then rows carry their 1-based position', async () => {
    assert.deepEqual(await parseKbImportRows(' [{"id":"a"}, 5] ', 'json'), [
      { line: 1, value: { id: 'a' } },
      { line: 2, value: 5 },
    ]);
  });

  it('when the body is empty, malformed or not an array, then 400 invalid_request', async () => {
    const cases: Array<[unknown, 'json' | 'jsonl', RegExp]> = [
      [undefined, 'json', /empty/],
      ['', 'jsonl', /empty/],
      ['  \n\n', 'jsonl', /empty/],
      ['[]', 'json', /no entries/],
      ['{"id":"a"}', 'json', /must be a JSON array/],
      ['[{"id":', 'json', /not valid JSON/],
    ];
    for (const [body, format, message] of cases) {
      await assert.rejects(
        () => parseKbImportRows(body, format),
        (err: unknown) =>
          err instanceof AppError && err.code === 'invalid_request' && message.test(err.message),
        String(body),
      );
    }
  });
});

describe('JSON array splitting (CLI)', () => {
  async function split(chunks: string[]) {
    const out: Array<{ text: string; line: number; item: number }> = [];
    async function* source() {
      yield* chunks;
    }
    for await (const e of jsonArrayElements(source())) out.push({ ...e, text: e.text.trim() });
    return out;
  }

  it('when elements span lines and chunks, then each comes whole with its starting line', async () => {
    const text =
      '\uFEFF[\n  {"id": "a", "answer": "x, ] } [ \\" {"},\n  {\n    "id": "b",\n    "tags": ["t]"]\n  }, 7 ,\n"s"]\n';
    for (const size of [1, 3, 7, 1000]) {
      const chunks: string[] = [];
      for (let i = 0; i < text.length; i += size) chunks.push(text.slice(i, i + size));
      const elements = await split(chunks);
      assert.deepEqual(
        elements.map((e) => [e.line, e.item]),
        [
          [2, 1],
          [3, 2],
          [6, 3],
          [7, 4],
        ],
      );
      assert.deepEqual(JSON.parse(elements[0]!.text), { id: 'a', answer: 'x, ] } [ " {' });
      assert.deepEqual(JSON.parse(elements[1]!.text), { id: 'b', tags: ['t]'] });
      assert.equal(elements[2]!.text, '7');
    }
    assert.deepEqual(await split(['[ ]']), []);
  });

  it('when the file is not a well-formed array, then it fails with the line', async () => {
    await assert.rejects(split(['{"id":1}']), /does not hold a JSON array/);
    await assert.rejects(split(['']), /empty/);
    await assert.rejects(split(['[{"a":1},\n{"b":2}']), /unexpected end of file at line 2/);
    await assert.rejects(split(['[1,,2]']), /unexpected ','/);
    await assert.rejects(split(['[1]\n[2]']), /unexpected content after the array at line 2/);
  });
});

describe('demo knowledge base', () => {
  it('when validated like an import, then every entry passes and ids are unique', () => {
    assert.ok(DEMO_KB.length >= 25 && DEMO_KB.length <= 40, `${DEMO_KB.length} entries`);
    for (const e of DEMO_KB) assert.deepEqual(parseKbEntry(e), e);
    assert.equal(new Set(DEMO_KB.map((e) => e.id)).size, DEMO_KB.length);
    assert.ok(DEMO_KB.some((e) => /reset my password/i.test(e.question)));
  });
});

describe('DemoKbSeeder', () => {
  const timing = { minRetryMs: 10, maxRetryMs: 40 };
  // The seeder's retry timers are unref'd (they never hold a process open): keep this one alive.
  let keepAlive: NodeJS.Timeout;
  before(() => {
    keepAlive = setInterval(() => {}, 1_000);
  });
  after(() => clearInterval(keepAlive));

  function target(failures: number, count = 0) {
    const calls: string[] = [];
    let left = failures;
    const t: DemoKbTarget = {
      async countEntries() {
        calls.push('count');
        if (left-- > 0) throw new AppError('service_unavailable', 'not yet');
        return { count };
      },
      async upsertEntries(req) {
        calls.push(`upsert:${req.orgId}:${req.entries.length}`);
        return { inserted: req.entries.length, updated: 0, failed: [] };
      },
    };
    return { t, calls };
  }

  it('when the knowledge service is down at first, then it retries with backoff and loads once', async () => {
    const { t, calls } = target(3);
    const notes: string[] = [];
    const seeder = new DemoKbSeeder(t, { markLoaded: (n) => notes.push(n) }, silent, { timing });
    const started = Date.now();
    seeder.start();
    assert.equal(await seeder.done, 'loaded');
    // 10 + 20 + 40 ms of backoff before the fourth attempt.
    assert.ok(Date.now() - started >= 60, `${Date.now() - started} ms`);
    assert.deepEqual(calls, ['count', 'count', 'count', 'count', `upsert:demo:${DEMO_KB.length}`]);
    assert.deepEqual(notes, [`loaded ${DEMO_KB.length} of ${DEMO_KB.length} entries`]);
    await new Promise((r) => setTimeout(r, 50));
    assert.equal(calls.length, 5, 'nothing after success');
  });

  it('when the organization already has entries, then nothing is imported', async () => {
    const { t, calls } = target(0, 12);
    const notes: string[] = [];
    const seeder = new DemoKbSeeder(t, { markLoaded: (n) => notes.push(n) }, silent, { timing });
    seeder.start();
    assert.equal(await seeder.done, 'already-populated');
    assert.deepEqual(calls, ['count']);
    assert.match(notes[0]!, /12 entries were already there/);
  });

  it('when stopped while retrying, then it stops calling', async () => {
    const { t, calls } = target(1_000);
    const seeder = new DemoKbSeeder(t, { markLoaded: () => assert.fail('not loaded') }, silent, {
      timing,
    });
    seeder.start();
    await new Promise((r) => setTimeout(r, 30));
    seeder.stop();
    assert.equal(await seeder.done, 'stopped');
    const n = calls.length;
    await new Promise((r) => setTimeout(r, 100));
    assert.equal(calls.length, n);
  });
});
