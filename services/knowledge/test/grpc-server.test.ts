// Component test: the real service on 127.0.0.1:0 (embedded index, built-in
// embeddings) called with the generated gRPC client.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Metadata, status, type ServiceError } from '@grpc/grpc-js';
import { knowledge } from '@support-agent/proto';
import {
  AppError,
  callUnary,
  checkHealth,
  ConfigError,
  createGrpcClient,
} from '@support-agent/shared';
import { loadKnowledgeConfig, type KnowledgeConfig } from '../src/config.js';
import { start, type KnowledgeServer } from '../src/server.js';
import { ENTRIES, silentLogger, tempDir } from './support/fixtures.js';

function configFor(dataDir: string): KnowledgeConfig {
  return {
    ...loadKnowledgeConfig({
      EMBEDDED: 'true',
      DATA_DIR: dataDir,
      KNOWLEDGE_ADDR: '127.0.0.1:0',
      LOG_LEVEL: 'silent',
    }),
    SHUTDOWN_GRACE_MS: 2_000,
  };
}

/** The raw gRPC error of a call that must fail. */
async function grpcError(promise: Promise<unknown>): Promise<ServiceError> {
  try {
    await promise;
  } catch (err) {
    const cause = (err as AppError).cause as ServiceError;
    return cause;
  }
  assert.fail('the call succeeded');
}

describe('knowledge gRPC service', () => {
  const data = tempDir('kb-grpc-');
  let server: KnowledgeServer;
  let client: knowledge.KnowledgeServiceClient;
  const address = () => `127.0.0.1:${server.port}`;
  const search = (req: Partial<knowledge.SearchRequest>) =>
    callUnary(client.search.bind(client), { orgId: 'acme', query: '', limit: 0, ...req });

  before(async () => {
    server = await start(configFor(data.path), silentLogger);
    client = createGrpcClient(knowledge.KnowledgeServiceClient, address());
  });
  after(async () => {
    client.close();
    await server.stop();
    data.remove();
  });

  it('when the server is up, then the health service reports SERVING for the knowledge service', async () => {
    assert.ok(server.port > 0);
    assert.equal(await checkHealth(address(), 'supportagent.knowledge.v1.KnowledgeService'), true);
    assert.match(server.collection, /^kb_v1_hashed_hashed-v1_512$/);
  });

  it('when the KB is empty, then Search returns no results and CountEntries 0', async () => {
    assert.deepEqual((await search({ query: 'reset password' })).results, []);
    assert.equal((await callUnary(client.countEntries.bind(client), { orgId: 'acme' })).count, 0);
  });

  it('when entries are upserted, then inserted, updated and failed are reported per request index', async () => {
    const first = await callUnary(client.upsertEntries.bind(client), {
      orgId: 'acme',
      entries: ENTRIES,
    });
    assert.deepEqual(first, { inserted: ENTRIES.length, updated: 0, failed: [] });
    const again = await callUnary(client.upsertEntries.bind(client), {
      orgId: 'acme',
      entries: [
        ENTRIES[0]!,
        { id: '', question: 'q', answer: 'a', tags: [] },
        { id: 'x', question: 'q', answer: '', tags: [] },
      ],
    });
    assert.equal(again.inserted, 0);
    assert.equal(again.updated, 1);
    assert.deepEqual(
      again.failed.map((f) => f.index),
      [1, 2],
    );
    assert.equal(
      (await callUnary(client.countEntries.bind(client), { orgId: 'acme' })).count,
      ENTRIES.length,
    );
  });

  it('when searching, then hits carry entry id, text and a score in [0,1], best first, default limit 5', async () => {
    const { results } = await search({ query: 'how can I get my invoices as PDF?' });
    assert.equal(results[0]?.entryId, 'billing-invoices');
    assert.equal(results[0]?.question, 'Where can I download my invoices?');
    assert.ok(results[0]!.score > 0.5 && results[0]!.score <= 1);
    const broad = await search({
      query: 'account settings security billing members invoices password export',
    });
    assert.equal(broad.results.length, 5);
    const one = await search({
      query: 'account settings security billing members invoices password export',
      limit: 1,
    });
    assert.equal(one.results.length, 1);
  });

  it('when the request is invalid, then the call fails with INVALID_ARGUMENT and the invalid_request code', async () => {
    const cases: [Partial<knowledge.SearchRequest>, string][] = [
      [{ query: '' }, 'query'],
      [{ query: '   ' }, 'query'],
      [{ query: 'x'.repeat(2001) }, 'query'],
      [{ query: 'ok', limit: 21 }, 'limit'],
      [{ query: 'ok', limit: -1 }, 'limit'],
      [{ query: 'ok', orgId: '' }, 'org_id'],
    ];
    for (const [req, param] of cases) {
      const err = await grpcError(search(req));
      assert.equal(err.code, status.INVALID_ARGUMENT, JSON.stringify(req).slice(0, 60));
      assert.equal(err.metadata.get('x-error-code')[0], 'invalid_request');
      assert.equal(err.metadata.get('x-error-param')[0], param);
    }
  });

  it('when searches are sent as one SearchBatch, then each gets what Search returns for it, in order, and an invalid one fails alone', async () => {
    const asked: knowledge.SearchRequest[] = [
      { orgId: 'acme', query: 'how can I get my invoices as PDF?', limit: 0 },
      { orgId: 'acme', query: 'ok', limit: 21 },
      { orgId: 'acme', query: 'account settings security billing members', limit: 2 },
      { orgId: '', query: 'ok', limit: 0 },
    ];
    const { results } = await callUnary(client.searchBatch.bind(client), { searches: asked });
    assert.equal(results.length, asked.length);
    for (const i of [0, 2]) {
      assert.deepEqual(results[i]!.results, (await search(asked[i]!)).results);
      assert.equal(results[i]!.errorCode, '');
    }
    assert.equal(results[0]!.results[0]?.entryId, 'billing-invoices');
    assert.equal(results[2]!.results.length, 2);
    assert.deepEqual(
      [1, 3].map((i) => [results[i]!.errorCode, results[i]!.errorParam, results[i]!.results]),
      [
        ['invalid_request', 'limit', []],
        ['invalid_request', 'org_id', []],
      ],
    );
    assert.match(results[1]!.errorMessage, /limit/);
  });

  it('when a SearchBatch carries one request id per search, then each search is logged with its own', async () => {
    const logged: unknown[] = [];
    // The service's logger at debug level, its 'kb search' lines kept (silent otherwise).
    const logger = Object.assign(Object.create(silentLogger) as typeof silentLogger, {
      isLevelEnabled: (level: string) => level === 'debug',
      debug: (fields: { requestId?: string }, msg: string) => {
        if (msg === 'kb search') logged.push(fields.requestId);
      },
    });
    const own = tempDir('kb-grpc-ids-');
    const logging = await start(configFor(own.path), logger);
    const c = createGrpcClient(knowledge.KnowledgeServiceClient, `127.0.0.1:${logging.port}`);
    try {
      const searches = ['invoices', 'password'].map((query) => ({
        orgId: 'acme',
        query,
        limit: 1,
      }));
      await callUnary(c.searchBatch.bind(c), { searches }, { requestId: 'req-a,req-b' });
      assert.deepEqual(logged, ['req-a', 'req-b']);
      logged.length = 0;
      // One id (answers' batches), or a list that does not match the searches: the whole for each.
      await callUnary(c.searchBatch.bind(c), { searches }, { requestId: 'triage-1' });
      await callUnary(c.searchBatch.bind(c), { searches }, { requestId: 'x,y,z' });
      assert.deepEqual(logged, ['triage-1', 'triage-1', 'x,y,z', 'x,y,z']);
    } finally {
      c.close();
      await logging.stop();
      own.remove();
    }
  });

  it('when a SearchBatch holds no search or more than 64, then the call fails with invalid_request', async () => {
    const one = { orgId: 'acme', query: 'invoices', limit: 1 };
    for (const searches of [[], Array.from({ length: 65 }, () => one)]) {
      const err = await grpcError(callUnary(client.searchBatch.bind(client), { searches }));
      assert.equal(err.code, status.INVALID_ARGUMENT, `${searches.length} searches`);
      assert.equal(err.metadata.get('x-error-param')[0], 'searches');
    }
    const full = await callUnary(client.searchBatch.bind(client), {
      searches: Array.from({ length: 64 }, () => one),
    });
    assert.equal(full.results.length, 64);
  });

  it('when the query is 2000 code points of astral characters, then it is accepted (lengths are code points)', async () => {
    const res = await search({ query: '🔑'.repeat(2000) });
    assert.deepEqual(res.results, []);
    const err = await grpcError(search({ query: '🔑'.repeat(2001) }));
    assert.equal(err.code, status.INVALID_ARGUMENT);
  });

  it('when entries are deleted, then DeleteEntries reports how many existed and search no longer finds them', async () => {
    const res = await callUnary(client.deleteEntries.bind(client), {
      orgId: 'acme',
      ids: ['billing-invoices', 'unknown'],
    });
    assert.equal(res.deleted, 1);
    const { results } = await search({ query: 'Where can I download my invoices?' });
    assert.ok(!results.some((r) => r.entryId === 'billing-invoices'));
  });

  it('when the service restarts on the same DATA_DIR, then the entries are still there', async () => {
    client.close();
    await server.stop();
    server = await start(configFor(data.path), silentLogger);
    client = createGrpcClient(knowledge.KnowledgeServiceClient, address());
    assert.equal(
      (await callUnary(client.countEntries.bind(client), { orgId: 'acme' })).count,
      ENTRIES.length - 1,
    );
    const { results } = await search({ query: 'turn on two-factor authentication' });
    assert.equal(results[0]?.entryId, 'two-factor');
  });

  it('when texts are sent to EmbeddingsService, then unit vectors of the index fingerprint come back in order', async () => {
    const embedder = createGrpcClient(knowledge.EmbeddingsServiceClient, address());
    try {
      const texts = ['export tickets to csv', 'reset my password', 'export tickets to csv'];
      const res = await callUnary(embedder.embed.bind(embedder), { texts });
      assert.equal(res.fingerprint, 'hashed/hashed-v1/512');
      assert.equal(res.embeddings.length, 3);
      const [a, b, c] = res.embeddings.map((e) => e.values);
      assert.equal(a!.length, 512);
      assert.ok(Math.abs(a!.reduce((s, x) => s + x * x, 0) - 1) < 1e-4);
      assert.deepEqual(a, c, 'same text, same vector');
      assert.notDeepEqual(a, b);
      assert.equal(
        await checkHealth(address(), 'supportagent.knowledge.v1.EmbeddingsService'),
        true,
      );
      const err = await grpcError(callUnary(embedder.embed.bind(embedder), { texts: [] }));
      assert.equal(err.code, status.INVALID_ARGUMENT);
      assert.equal(err.metadata.get('x-error-param')[0], 'texts');
    } finally {
      embedder.close();
    }
  });

  it('when a request id is sent, then the call still succeeds (it is only logged)', async () => {
    const md = new Metadata();
    md.set('x-request-id', 'req-123');
    const res = await new Promise<knowledge.CountEntriesResponse>((resolve, reject) =>
      client.countEntries({ orgId: 'acme' }, md, (err, r) => (err ? reject(err) : resolve(r))),
    );
    assert.equal(res.count, ENTRIES.length - 1);
  });
});

describe('knowledge configuration', () => {
  it('when QDRANT_URL is missing outside npm start, then the service refuses to start with a clear message', () => {
    assert.throws(
      () => loadKnowledgeConfig({}),
      (err: unknown) =>
        err instanceof ConfigError && /QDRANT_URL.*EMBEDDED=true/s.test(err.message),
    );
  });

  it('when started by npm start (EMBEDDED=true), then defaults apply', () => {
    const c = loadKnowledgeConfig({ EMBEDDED: 'true' });
    assert.equal(c.KNOWLEDGE_ADDR.host, '127.0.0.1');
    assert.equal(c.KNOWLEDGE_ADDR.port, 50052);
    assert.equal(c.QDRANT_COLLECTION_PREFIX, 'kb');
    assert.equal(c.EMBEDDINGS_MODEL, 'text-embedding-3-small');
    assert.equal(c.DATA_DIR, './data');
    assert.equal(c.QDRANT_URL, undefined);
  });

  it('when variables are set, then they are parsed and validated', () => {
    const c = loadKnowledgeConfig({
      KNOWLEDGE_ADDR: '0.0.0.0:6000',
      QDRANT_URL: 'http://qdrant:6333',
      QDRANT_COLLECTION_PREFIX: 'kb-prod',
      EMBEDDINGS_DIMENSIONS: '256',
    });
    assert.equal(c.KNOWLEDGE_ADDR.port, 6000);
    assert.equal(c.QDRANT_URL, 'http://qdrant:6333');
    assert.equal(c.EMBEDDINGS_DIMENSIONS, 256);
    assert.throws(
      () => loadKnowledgeConfig({ EMBEDDED: 'true', QDRANT_COLLECTION_PREFIX: 'kb_x' }),
      ConfigError,
    );
    assert.throws(
      () => loadKnowledgeConfig({ EMBEDDED: 'true', KNOWLEDGE_ADDR: 'nope' }),
      ConfigError,
    );
  });

  it('when a hand-built config lacks QDRANT_URL without EMBEDDED, then start() refuses', async () => {
    const config = { ...configFor('/nonexistent'), EMBEDDED: false };
    await assert.rejects(start(config, silentLogger), ConfigError);
  });
});
