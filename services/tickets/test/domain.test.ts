// Unit tests of the domain rules that need no server: cursors, transitions, validation, config.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { describe, it } from 'node:test';
import { AppError, ConfigError } from '@support-agent/shared';
import { loadTicketsConfig } from '../src/config.js';
import { CursorCodec } from '../src/domain/cursor.js';
import { canMove } from '../src/domain/update-status.js';
import { TICKET_STATUSES, type Ticket } from '../src/domain/ticket.js';
import { codePointLength, optionalText, requireText } from '../src/domain/validation.js';
import { SortedTicketIndex } from '../src/data-access/embedded/sorted-index.js';
import { toStoreError } from '../src/data-access/mysql/ticket-repository.js';

function expectCode(fn: () => unknown, code: string, param?: string): void {
  assert.throws(fn, (err: unknown) => {
    assert.ok(err instanceof AppError);
    assert.equal(err.code, code);
    if (param) assert.equal(err.param, param);
    return true;
  });
}

describe('cursor codec', () => {
  const codec = new CursorCodec(randomBytes(32));
  const pos = { createdAtMs: 1_763_720_130_123, id: 42 };

  it('when a cursor is decoded with the same org and filters, then it gives back the position', () => {
    const c = codec.encode(pos, 'org_a', { status: 'open' });
    assert.match(c, /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/);
    assert.deepEqual(codec.decode(c, 'org_a', { status: 'open' }), pos);
  });

  it('when org, filters or secret differ, then invalid_cursor', () => {
    const c = codec.encode(pos, 'org_a', {});
    expectCode(() => codec.decode(c, 'org_b', {}), 'invalid_cursor', 'cursor');
    expectCode(() => codec.decode(c, 'org_a', { priority: 'high' }), 'invalid_cursor', 'cursor');
    expectCode(
      () => new CursorCodec(randomBytes(32)).decode(c, 'org_a', {}),
      'invalid_cursor',
      'cursor',
    );
  });

  it('when filters are the same set in the cursor and the request, then field order does not matter', () => {
    const c = codec.encode(pos, 'o', { status: 'open', category: 'bug' });
    assert.deepEqual(
      codec.decode(c, 'o', { category: 'bug', status: 'open', priority: undefined }),
      pos,
    );
  });

  it('when the secret is too short, then the codec refuses it', () => {
    assert.throws(() => new CursorCodec(randomBytes(16)));
  });
});

describe('status transitions', () => {
  it('when the staff transition table is read, then exactly the DESIGN.md §3 moves are allowed', () => {
    const allowed = TICKET_STATUSES.flatMap((from) =>
      TICKET_STATUSES.filter((to) => canMove(from, to)).map((to) => `${from}->${to}`),
    );
    assert.deepEqual(allowed.sort(), [
      'in_progress->duplicate',
      'in_progress->resolved',
      'open->duplicate',
      'open->in_progress',
      'resolved->closed',
      'resolved->duplicate',
      'resolved->open',
    ]);
  });
});

describe('validation', () => {
  it('when text has astral characters, then each counts as one code point', () => {
    assert.equal(codePointLength('a😀𝒜'), 3);
    assert.equal(requireText('😀'.repeat(5), 'content', 5), '😀'.repeat(5));
    expectCode(() => requireText('😀'.repeat(6), 'content', 5), 'invalid_request', 'content');
  });

  it('when optional text is blank, then it is absent; otherwise kept verbatim', () => {
    assert.equal(optionalText('  ', 'author_name', 10), null);
    assert.equal(optionalText(undefined, 'author_name', 10), null);
    assert.equal(optionalText(' x ', 'author_name', 10), ' x ');
  });
});

describe('sorted ticket index', () => {
  const t = (id: number, ms: number) => ({ id, createdAt: new Date(ms) }) as Ticket;

  it('when tickets arrive out of order with equal timestamps, then they are walked newest first and from any position', () => {
    const index = new SortedTicketIndex();
    const items = [t(1, 100), t(2, 100), t(5, 300), t(3, 200), t(4, 100), t(6, 50)];
    for (const i of items) index.add(i);
    const order = (after?: { createdAtMs: number; id: number }) =>
      [...index.newestFirst(after)].map((x) => x.id);
    assert.deepEqual(order(), [5, 3, 4, 2, 1, 6]);
    assert.deepEqual(order({ createdAtMs: 100, id: 4 }), [2, 1, 6]);
    assert.deepEqual(order({ createdAtMs: 100, id: 3 }), [2, 1, 6]); // a position between items
    assert.deepEqual(order({ createdAtMs: 50, id: 6 }), []);
    index.remove(items[3]!);
    assert.deepEqual(order(), [5, 4, 2, 1, 6]);
  });
});

describe('configuration', () => {
  it('when no backend URL is set and EMBEDDED is not true, then loading fails naming each missing variable', () => {
    assert.throws(
      () => loadTicketsConfig({}),
      (err: unknown) => {
        assert.ok(err instanceof ConfigError);
        for (const name of ['MYSQL_URL', 'REDIS_URL', 'NATS_URL'])
          assert.match(err.message, new RegExp(`${name} is required`));
        return true;
      },
    );
    assert.throws(
      () => loadTicketsConfig({ REDIS_URL: 'redis://x:1', NATS_URL: 'nats://x:2' }),
      /MYSQL_URL is required/,
    );
  });

  it('when EMBEDDED is true, then unset URLs are allowed and defaults apply', () => {
    const c = loadTicketsConfig({ EMBEDDED: 'true' });
    assert.equal(c.MYSQL_URL, undefined);
    assert.deepEqual(c.TICKETS_ADDR, {
      host: '127.0.0.1',
      port: 50051,
      address: '127.0.0.1:50051',
    });
    assert.equal(c.DATA_DIR, './data');
    assert.equal(c.OUTBOX_BATCH, 100);
  });

  it('when values are malformed, then loading fails naming them', () => {
    assert.throws(
      () => loadTicketsConfig({ EMBEDDED: 'true', TICKETS_ADDR: '50051' }),
      /TICKETS_ADDR/,
    );
    assert.throws(
      () => loadTicketsConfig({ EMBEDDED: 'true', MYSQL_URL: 'postgres://x' }),
      /MYSQL_URL/,
    );
    assert.throws(() => loadTicketsConfig({ EMBEDDED: 'true', OUTBOX_BATCH: '0' }), /OUTBOX_BATCH/);
  });
});

describe('MySQL error mapping', () => {
  it('when the database is unreachable, then the error is service_unavailable; a duplicate key stays as it is', () => {
    for (const err of [
      { code: 'ECONNREFUSED' },
      { code: 'PROTOCOL_CONNECTION_LOST', fatal: true },
      { fatal: true },
    ]) {
      const mapped = toStoreError(Object.assign(new Error('x'), err));
      assert.ok(mapped instanceof AppError);
      assert.equal(mapped.code, 'service_unavailable');
      assert.equal(mapped.retryAfter, 1);
    }
    const dup = Object.assign(new Error('dup'), { code: 'ER_DUP_ENTRY' });
    assert.equal(toStoreError(dup), dup);
  });
});
