// The labelled data the evaluations read (JSON Lines, the StackFAQ layout) and the reranking
// features computed from it in process.
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { searchEntries } from '@support-agent/knowledge/search';
import {
  labelledQueries,
  loadEvalCollection,
  openInProcessKb,
  readJsonl,
  type EvalCollection,
} from '@support-agent/quality';

// A small KB written for this test.
const CORPUS = [
  ['reset-password', 'How do I reset my password?', 'Open Settings, Security, Reset password.'],
  ['export-csv', 'Can I export my tickets to CSV?', 'In the Tickets view choose Export, then CSV.'],
  ['delete-account', 'How do I delete my account?', 'Owners close it under Settings, Billing.'],
  ['invoices', 'Where do I find my invoices?', 'Billing lists every invoice as a PDF.'],
].map(([faq_id, question, answer], i) => ({ faq_id, thread_id: `t${i}`, question, answer }));

describe('labelled data', () => {
  let dir: string;
  let collection: EvalCollection;
  const write = (name: string, text: string) => {
    writeFileSync(join(dir, name), text);
    return join(dir, name);
  };

  before(() => {
    dir = mkdtempSync(join(tmpdir(), 'quality-test-'));
    const queries = [
      { query_id: 'q1', thread_id: 't0', text: 'forgot my password' },
      { query_id: 'q2', thread_id: 't1', text: 'download tickets as a spreadsheet' },
      { query_id: 'q3', thread_id: 't1', text: '   ' },
      { query_id: 'q4', thread_id: 't3', text: 'invoice pdf' },
    ];
    const qrels = [
      { query_id: 'q1', faq_id: 'reset-password', relevance: 1 },
      { query_id: 'q2', faq_id: 'export-csv', relevance: 1 },
      { query_id: 'q2', faq_id: 'invoices', relevance: 0 },
      { query_id: 'q4', faq_id: 'invoices' },
    ];
    const lines = (rows: unknown[]) => rows.map((r) => JSON.stringify(r)).join('\n\n') + '\n';
    collection = loadEvalCollection(
      write('corpus.jsonl', lines(CORPUS)),
      write('queries.jsonl', lines(queries)),
      write('qrels.jsonl', lines(qrels)),
    );
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('when JSON Lines are read, then blank lines are skipped and a malformed line fails', () => {
    assert.deepEqual(readJsonl(write('a.jsonl', '{"a":1}\n\n  \n{"a":2}\n')), [{ a: 1 }, { a: 2 }]);
    assert.throws(() => readJsonl(write('b.jsonl', '{"a":1}\n{oops}\n')), SyntaxError);
  });

  it('when a collection is loaded, then empty queries and judgements of relevance 0 are dropped', () => {
    assert.equal(collection.corpus.length, 4);
    assert.deepEqual(
      collection.queries.map((q) => q.query_id),
      ['q1', 'q2', 'q4'],
    );
    assert.deepEqual([...collection.judgements.relevant.get('q2')!], ['export-csv']);
    // A judgement without a relevance counts as relevant.
    assert.deepEqual([...collection.judgements.relevant.get('q4')!], ['invoices']);
    assert.equal(collection.judgements.threadOf.get('invoices'), 't3');
  });

  it('when the KB is indexed in process, then search finds its entries and closing removes the index', async () => {
    const before = new Set(readdirSync(tmpdir()));
    const kb = await openInProcessKb(collection.corpus, 'quality-test');
    const created = readdirSync(tmpdir()).filter((d) => !before.has(d));
    try {
      const hits = await searchEntries(kb.deps, {
        orgId: kb.orgId,
        query: 'how can I reset my password',
        limit: 2,
      });
      assert.equal(hits[0]?.entryId, 'reset-password');
    } finally {
      await kb.close();
    }
    for (const d of created) assert.ok(!existsSync(join(tmpdir(), d)), `${d} left behind`);
  });

  it('when labelled queries are featurized, then each covered query gets candidate rows and off-topic ones are marked', async () => {
    const rows = await labelledQueries(collection, 20, ['what is the weather in Paris']);
    assert.deepEqual(
      rows.map((r) => [r.queryId, r.covered]),
      [
        ['q1', true],
        ['q2', true],
        ['q4', true],
        ['off-topic-0', false],
      ],
    );
    const q1 = rows[0]!;
    assert.equal(q1.group, 't0');
    assert.ok(
      q1.hybrid.some((r) => r.candidate.entry.id === 'reset-password'),
      'the relevant entry is a candidate',
    );
    // The uncovered variant is the same question against the KB without its relevant entries.
    assert.ok(q1.uncovered.every((r) => !q1.relevant.has(r.candidate.entry.id)));
    assert.equal(rows[3]!.relevant.size, 0);
  });
});
