import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { AppError, fromBatchItemError, NO_BATCH_ERROR, toBatchItemError } from '../src/index.js';

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
