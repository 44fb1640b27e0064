import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { AppError } from '@support-agent/shared';
import {
  codePointLength,
  readEnum,
  readIdempotencyKeyHeader,
  readInteger,
  readString,
} from '../src/domain/validation.js';

const readIdempotencyKeyHeaderOf = (value: unknown) => readIdempotencyKeyHeader(value, 200);

function rejects(fn: () => unknown, param: string): void {
  assert.throws(fn, (err: unknown) => {
    assert.ok(err instanceof AppError);
    assert.equal(err.code, 'invalid_request');
    assert.equal(err.param, param);
    return true;
  });
}

describe('validation helpers', () => {
  const query = { param: 'query', in: 'query' as const, required: true, maxLength: 5 };

  it('when lengths are counted, then code points count, not UTF-16 units', () => {
    assert.equal(codePointLength('😀😀'), 2);
    assert.equal(readString('😀😀😀😀😀', query), '😀😀😀😀😀');
    rejects(() => readString('😀😀😀😀😀😀', query), 'query');
  });

  it('when a string is empty or white space only, then it counts as missing', () => {
    for (const v of [undefined, null, '', '   ', '\t\n', '\u00a0'])
      rejects(() => readString(v, query), 'query');
    assert.equal(readString('  ', { ...query, required: false }), undefined);
  });

  it('when a query parameter is repeated or a body field has the wrong type, then it is rejected', () => {
    rejects(() => readString(['a', 'b'], query), 'query');
    rejects(() => readString(12, { ...query, in: 'body' }), 'query');
    rejects(() => readString({}, { ...query, in: 'body' }), 'query');
  });

  it('when integers are read, then only plain decimal integers in range pass', () => {
    const limit = { param: 'limit', in: 'query' as const, min: 1, max: 20, default: 5 };
    assert.equal(readInteger(undefined, limit), 5);
    assert.equal(readInteger('', limit), 5);
    assert.equal(readInteger('  ', limit), 5);
    assert.equal(readInteger('1', limit), 1);
    assert.equal(readInteger('20', limit), 20);
    assert.equal(readInteger('007', limit), 7);
    for (const bad of ['0', '21', 'abc', '1.5', '-1', '+1', '1e1', ' 1', '0x1', ['1', '2']]) {
      rejects(() => readInteger(bad, limit), 'limit');
    }
    assert.equal(readInteger(3, { ...limit, in: 'body' }), 3);
    rejects(() => readInteger('3', { ...limit, in: 'body' }), 'limit');
    rejects(() => readInteger(1.5, { ...limit, in: 'body' }), 'limit');
  });

  it('when enums are read, then only the listed values pass (case-sensitive)', () => {
    const rule = { param: 'status', in: 'query' as const, values: ['open', 'closed'] as const };
    assert.equal(readEnum('open', rule), 'open');
    assert.equal(readEnum(undefined, rule), undefined);
    rejects(() => readEnum('Open', rule), 'status');
    rejects(() => readEnum(['open', 'open'], rule), 'status');
  });

  it('when the Idempotency-Key header is a structured-field string, then it is unescaped', () => {
    assert.equal(readIdempotencyKeyHeaderOf('"abc"'), 'abc');
    assert.equal(readIdempotencyKeyHeaderOf('"a \\"quoted\\" \\\\ key"'), 'a "quoted" \\ key');
    assert.equal(readIdempotencyKeyHeaderOf('bare-token_1:2/3'), 'bare-token_1:2/3');
    assert.equal(
      readIdempotencyKeyHeaderOf('4f9c1c2e-9d7b-4c1e-8a3e-0f2d3c4b5a69'),
      '4f9c1c2e-9d7b-4c1e-8a3e-0f2d3c4b5a69',
    );
    assert.equal(readIdempotencyKeyHeaderOf(undefined), undefined);
    assert.equal(readIdempotencyKeyHeaderOf('""'), undefined);
    for (const bad of ['"unterminated', 'two words', '"bad \\n escape"', 'a,b', 'ü']) {
      rejects(() => readIdempotencyKeyHeaderOf(bad), 'Idempotency-Key');
    }
    assert.equal(readIdempotencyKeyHeaderOf(`"${'k'.repeat(200)}"`), 'k'.repeat(200));
    rejects(() => readIdempotencyKeyHeaderOf('k'.repeat(201)), 'Idempotency-Key');
  });
});
