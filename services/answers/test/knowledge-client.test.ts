// The KnowledgeSearch adapter against an in-test knowledge service (real gRPC): searches asked
// together leave as one SearchBatch call, each settles with its own hits or error.
import { after, before, beforeEach, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { AppError } from '@support-agent/shared';
import { KnowledgeSearchClient } from '../src/data-access/knowledge-client.js';
import { KnowledgeStub } from './support/stubs.js';

const KB = {
  acme: [
    { id: 'a1', question: 'How do I reset my password?', answer: 'Use the reset link.' },
    { id: 'a2', question: 'How do I export invoices?', answer: 'Billing, then Export.' },
  ],
  globex: [{ id: 'g1', question: 'How do I export invoices?', answer: 'Ask finance.' }],
};

const ids = (hits: { entryId: string }[]) => hits.map((h) => h.entryId);

describe('KnowledgeSearchClient', () => {
  let stub: KnowledgeStub;
  let address: string;
  const clients: KnowledgeSearchClient[] = [];
  const client = (batchMax: number) => {
    const c = new KnowledgeSearchClient(address, 2_000, batchMax);
    clients.push(c);
    return c;
  };

  before(async () => {
    stub = new KnowledgeStub();
    address = await stub.start();
    for (const [org, entries] of Object.entries(KB)) stub.kb.set(org, entries);
  });
  after(async () => {
    for (const c of clients) c.close();
    await stub.stop();
  });
  beforeEach(() => {
    stub.batches.length = 0;
    stub.searches = 0;
    stub.down = false;
    stub.failing.clear();
  });

  test('when searches are asked together, then they leave as one SearchBatch and each gets its own hits', async () => {
    const c = client(32);
    const [reset, acmeExport, globexExport] = await Promise.all([
      c.search('acme', 'reset my password', 5),
      c.search('acme', 'export invoices', 5),
      c.search('globex', 'export invoices', 5),
    ]);
    assert.deepEqual(stub.batches, [3]);
    assert.equal(stub.searches, 3);
    assert.equal(ids(reset!)[0], 'a1');
    assert.equal(ids(acmeExport!)[0], 'a2');
    assert.deepEqual(ids(globexExport!), ['g1']);
  });

  test('when a search is asked alone, or batching is off, then each goes as its own Search call', async () => {
    assert.deepEqual(ids(await client(32).search('globex', 'export invoices', 5)), ['g1']);
    const off = client(1);
    const hits = await Promise.all([
      off.search('acme', 'reset my password', 5),
      off.search('globex', 'export invoices', 5),
    ]);
    assert.deepEqual(stub.batches, []);
    assert.equal(stub.searches, 3);
    assert.deepEqual(
      hits.map((h) => ids(h)[0]),
      ['a1', 'g1'],
    );
  });

  test('when more searches are asked together than one batch takes, then they leave in batches of at most that many', async () => {
    const c = client(4);
    const hits = await Promise.all(
      Array.from({ length: 9 }, () => c.search('globex', 'export invoices', 5)),
    );
    assert.deepEqual(stub.batches, [4, 4]); // the ninth alone, as a plain Search
    assert.equal(stub.searches, 9);
    for (const h of hits) assert.deepEqual(ids(h), ['g1']);
  });

  test('when one search of a batch fails, then only that one rejects, with the error Search would have thrown', async () => {
    stub.failing.set(
      'bad',
      new AppError('service_unavailable', 'index warming up', { retryAfter: 3 }),
    );
    const c = client(32);
    const [ok, bad] = await Promise.allSettled([
      c.search('acme', 'reset my password', 5),
      c.search('acme', 'bad', 5),
    ]);
    assert.deepEqual(stub.batches, [2]);
    assert.equal(ok.status, 'fulfilled');
    assert.equal(bad.status, 'rejected');
    const err = (bad as PromiseRejectedResult).reason as AppError;
    assert.ok(err instanceof AppError);
    assert.deepEqual(
      [err.code, err.message, err.retryAfter],
      ['service_unavailable', 'index warming up', 3],
    );
  });

  test('when knowledge is down, then every search of the batch rejects with service_unavailable', async () => {
    stub.down = true;
    const c = client(32);
    const settled = await Promise.allSettled([
      c.search('acme', 'reset my password', 5),
      c.search('globex', 'export invoices', 5),
    ]);
    // One SearchBatch of both searches; the channel's retry policy may send it again (to another
    // replica, UNAVAILABLE being retryable for read-only calls), at most three times in all.
    assert.ok(stub.batches.length >= 1 && stub.batches.length <= 3, `${stub.batches}`);
    assert.ok(
      stub.batches.every((size) => size === 2),
      `${stub.batches}`,
    );
    for (const s of settled) {
      assert.equal(s.status, 'rejected');
      assert.equal(((s as PromiseRejectedResult).reason as AppError).code, 'service_unavailable');
    }
  });
});
