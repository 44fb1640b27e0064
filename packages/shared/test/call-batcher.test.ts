import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { knowledge } from '@support-agent/proto';
import { startStubServer } from '../../../test/support/grpc-stub.js';
import {
  AppError,
  CallBatcher,
  createKnowledgeClient,
  createLogger,
  fromBatchItemError,
  fromGrpcError,
  isUnimplementedCall,
  NO_BATCH_ERROR,
  toBatchItemError,
  toGrpcError,
  unaryHandler,
} from '../src/index.js';

describe('batch item errors', () => {
  it('when a trusted error crosses a batch call, then code, message, param and retry-after survive', () => {
    const sent = new AppError('invalid_request', 'limit must be 1 to 20', { param: 'limit' });
    const back = fromBatchItemError(toBatchItemError(sent));
    assert.deepEqual(
      [back.code, back.message, back.param, back.retryAfter],
      ['invalid_request', 'limit must be 1 to 20', 'limit', undefined],
    );
    const busy = fromBatchItemError(
      toBatchItemError(new AppError('service_unavailable', 'down', { retryAfter: 2 })),
    );
    assert.deepEqual(
      [busy.code, busy.retryAfter, busy.param],
      ['service_unavailable', 2, undefined],
    );
  });

  it('when the error is a bug or an unknown code, then it crosses as internal_error without its message', () => {
    assert.deepEqual(toBatchItemError(new TypeError('x is undefined')), {
      ...NO_BATCH_ERROR,
      errorCode: 'internal_error',
      errorMessage: 'internal error',
    });
    const unknown = fromBatchItemError({
      ...NO_BATCH_ERROR,
      errorCode: 'teapot',
      errorMessage: 'x',
    });
    assert.deepEqual([unknown.code, unknown.message], ['internal_error', 'internal error']);
  });
});

describe('CallBatcher against a real gRPC server', () => {
  const logger = createLogger('call-batcher-test', 'silent');
  const hit = (query: string): knowledge.SearchHit => ({
    entryId: query,
    question: `q ${query}`,
    answer: 'a',
    score: 0.5,
  });

  /** A knowledge server with Search, and SearchBatch as `batch` answers it (absent: none). */
  async function serve(batch?: () => Promise<knowledge.SearchBatchResponse>) {
    const singles: string[] = [];
    const server = await startStubServer([
      {
        definition: knowledge.KnowledgeServiceService,
        implementation: {
          search: unaryHandler(logger, 'Search', async (req: knowledge.SearchRequest) => {
            singles.push(req.query);
            return { results: [hit(req.query)] };
          }),
          ...(batch ? { searchBatch: unaryHandler(logger, 'SearchBatch', batch) } : {}),
        },
      },
    ]);
    const client = createKnowledgeClient(`127.0.0.1:${server.port}`);
    const batcher = new CallBatcher<knowledge.SearchRequest, knowledge.SearchHit[]>(
      32,
      async (request, timeoutMs) => (await client.search(request, { timeoutMs })).results,
      async (searches, timeoutMs) =>
        (await client.searchBatch({ searches }, { timeoutMs })).results.map((r) =>
          r.errorCode === '' ? r.results : fromBatchItemError(r),
        ),
    );
    const search = (query: string) => batcher.call({ orgId: 'o', query, limit: 1 }, 2_000);
    const stop = async () => {
      client.close();
      await server.stop(1_000);
    };
    return { singles, search, stop };
  }

  it('when the server has no SearchBatch (an older version), then the batch goes as single calls and each caller gets its own result', async () => {
    const s = await serve();
    try {
      const results = await Promise.all(['a', 'b', 'c'].map(s.search));
      assert.deepEqual(results, [[hit('a')], [hit('b')], [hit('c')]]);
      assert.deepEqual([...s.singles].sort(), ['a', 'b', 'c']);
    } finally {
      await s.stop();
    }
  });

  it('when the batch call fails as a whole for another reason, then each caller gets that error and nothing is retried', async () => {
    const s = await serve(async () => {
      throw new AppError('service_unavailable', 'index loading', { retryAfter: 2 });
    });
    try {
      const settled = await Promise.allSettled(['a', 'b'].map(s.search));
      for (const r of settled) {
        assert.equal(r.status, 'rejected');
        assert.equal((r.reason as AppError).code, 'service_unavailable');
      }
      assert.deepEqual(s.singles, []);
    } finally {
      await s.stop();
    }
  });

  it('when an error is one of our own codes carried as UNIMPLEMENTED, then it is not taken for a missing method', () => {
    const ours = new AppError('method_not_allowed', 'no');
    assert.equal(isUnimplementedCall(fromGrpcError(toGrpcError(ours))), false);
    assert.equal(isUnimplementedCall(new AppError('internal_error', 'x')), false);
  });
});
