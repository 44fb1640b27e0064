// End-to-end: create and list tickets through the gateway on real MariaDB, Redis and NATS.
import { test, before, after, describe } from 'node:test';
import assert from 'node:assert/strict';
import mysql from 'mysql2/promise';
import { Redis } from 'ioredis';
import { requireEnv } from '../support/mysql.js';
import { mcpRpc, toolCall, type ToolResult } from '../support/mcp.js';
import { Stack, api } from '../support/stack.js';

let stack: Stack;

async function countTickets(where = '1=1', params: unknown[] = []): Promise<number> {
  const conn = await mysql.createConnection({ uri: stack.mysqlUrl });
  try {
    const [rows] = await conn.query(`SELECT COUNT(*) AS n FROM tickets WHERE ${where}`, params);
    return Number((rows as Array<{ n: number }>)[0]!.n);
  } finally {
    await conn.end();
  }
}

before(async () => {
  stack = await Stack.onTestBackends('e2e-tickets', {
    nats: 'shared',
    services: ['tickets'],
  });
});

after(() => stack?.stop());

const create = (key: string, body: Record<string, unknown>, headers: Record<string, string> = {}) =>
  api(stack.baseUrl(), 'POST', '/api/v1/agent/tickets', { key, body, headers });

describe('create ticket', () => {
  test('when a ticket is created, then it is listed open, medium, uncategorised, with an RFC 3339 ms timestamp', async () => {
    const key = await stack.orgWithKey('create-basic');
    const res = await create(key, {
      content: '  How do I reset my password?  ',
      authorName: 'ana',
    });
    assert.equal(res.status, 201);
    assert.equal(res.json.duplicate, false);
    assert.equal(typeof res.json.ticket_id, 'number');
    const list = await api(stack.baseUrl(), 'GET', '/api/v1/agent/tickets', { key });
    assert.equal(list.status, 200);
    assert.deepEqual(Object.keys(list.json.tickets[0]).sort(), [
      'ai_summary',
      'category',
      'content',
      'created_at',
      'id',
      'priority',
      'status',
    ]);
    const t = list.json.tickets[0];
    assert.equal(t.id, res.json.ticket_id);
    assert.equal(t.content, '  How do I reset my password?  ', 'content is stored verbatim');
    assert.equal(t.status, 'open');
    assert.equal(t.priority, 'medium');
    assert.equal(t.category, null);
    assert.equal(t.ai_summary, null);
    assert.match(t.created_at, /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
    assert.equal(list.json.next_cursor, null);
  });

  test('when 50 concurrent POSTs share one Idempotency-Key, then exactly one ticket exists and 49 are duplicates', async () => {
    const key = await stack.orgWithKey('idem-concurrent');
    const fire = () =>
      Promise.all(
        Array.from({ length: 50 }, (_, i) =>
          create(key, { content: `attempt ${i}` }, { 'Idempotency-Key': 'order-42' }),
        ),
      );
    const first = await fire();
    assert.deepEqual(new Set(first.map((r) => r.status)), new Set([201]));
    const ids = new Set(first.map((r) => r.json.ticket_id));
    assert.equal(ids.size, 1);
    assert.equal(first.filter((r) => r.json.duplicate === true).length, 49);
    assert.equal(await countTickets('org_id = ?', ['idem-concurrent']), 1);

    // Redis loses every lock and cached result: MySQL's unique key still holds.
    const redis = new Redis(requireEnv('TEST_REDIS_URL'));
    await redis.flushall();
    await redis.quit();
    const second = await fire();
    assert.deepEqual(new Set(second.map((r) => r.status)), new Set([201]));
    assert.deepEqual(new Set(second.map((r) => r.json.ticket_id)), ids);
    assert.equal(second.filter((r) => r.json.duplicate === true).length, 50);
    assert.equal(await countTickets('org_id = ?', ['idem-concurrent']), 1);
  });

  test('when Redis is flushed between two concurrent bursts of a new key, then still one ticket', async () => {
    const key = await stack.orgWithKey('idem-flush');
    const redis = new Redis(requireEnv('TEST_REDIS_URL'));
    const burst = Array.from({ length: 25 }, () =>
      create(key, { content: 'flush race' }, { 'Idempotency-Key': '"sf-string"' }),
    );
    await redis.flushall();
    const more = Array.from({ length: 25 }, () =>
      create(key, { content: 'flush race', idempotencyKey: 'sf-string' }),
    );
    const all = await Promise.all([...burst, ...more]);
    await redis.quit();
    assert.equal(new Set(all.map((r) => r.json.ticket_id)).size, 1);
    assert.equal(all.filter((r) => r.json.duplicate === false).length, 1);
    assert.equal(await countTickets('org_id = ?', ['idem-flush']), 1);
  });

  test('when header and body carry different idempotency keys, then the header wins', async () => {
    const key = await stack.orgWithKey('idem-header');
    const a = await create(
      key,
      { content: 'a', idempotencyKey: 'body-key' },
      { 'Idempotency-Key': 'header-key' },
    );
    const b = await create(
      key,
      { content: 'b', idempotencyKey: 'other-body-key' },
      { 'Idempotency-Key': 'header-key' },
    );
    assert.equal(b.json.ticket_id, a.json.ticket_id);
    assert.equal(b.json.duplicate, true);
    // The body key of the first call was not used.
    const c = await create(key, { content: 'c', idempotencyKey: 'body-key' });
    assert.equal(c.json.duplicate, false);
    assert.notEqual(c.json.ticket_id, a.json.ticket_id);
  });

  test('when two organizations use the same idempotency key, then each gets its own ticket', async () => {
    const k1 = await stack.orgWithKey('idem-org-1');
    const k2 = await stack.orgWithKey('idem-org-2');
    const a = await create(k1, { content: 'same key' }, { 'Idempotency-Key': 'shared' });
    const b = await create(k2, { content: 'same key' }, { 'Idempotency-Key': 'shared' });
    assert.equal(a.json.duplicate, false);
    assert.equal(b.json.duplicate, false);
    // Each organization's first ticket: number 1 in each, two tickets.
    assert.deepEqual([a.json.ticket_id, b.json.ticket_id], [1, 1]);
    assert.equal(await countTickets('org_id IN (?, ?)', ['idem-org-1', 'idem-org-2']), 2);
  });

  test('when two organizations create tickets in turn over REST and MCP, then each numbers its own 1, 2, 3…, and lists and the admin status change use those numbers', async () => {
    const keys = [await stack.orgWithKey('numbers-a'), await stack.orgWithKey('numbers-b')];
    const viaMcp = async (key: string, content: string) => {
      const res = await mcpRpc(stack.baseUrl(), toolCall('create_ticket', { content }), { key });
      assert.equal(res.status, 200, res.text);
      return (res.json.result as ToolResult).structuredContent!.ticket_id as number;
    };
    const numbers: number[][] = [[], []];
    for (let round = 0; round < 3; round++) {
      for (const org of [0, 1]) {
        numbers[org]!.push(
          (await create(keys[org]!, { content: `${org}:${round}` })).json.ticket_id,
        );
        numbers[org]!.push(await viaMcp(keys[org]!, `${org}:${round} (MCP)`));
      }
    }
    assert.deepEqual(numbers, [
      [1, 2, 3, 4, 5, 6],
      [1, 2, 3, 4, 5, 6],
    ]);
    const patched = await stack.admin<{ id: number; content: string; status: string }>(
      'PATCH',
      '/admin/v1/orgs/numbers-b/tickets/3',
      { status: 'in_progress' },
    );
    assert.deepEqual([patched.id, patched.content, patched.status], [3, '1:1', 'in_progress']);
    for (const [org, key] of keys.entries()) {
      const list = await api(stack.baseUrl(), 'GET', '/api/v1/agent/tickets?limit=20', { key });
      assert.deepEqual(
        list.json.tickets.map((t: { id: number; status: string }) => [t.id, t.status]),
        [6, 5, 4, 3, 2, 1].map((id) => [id, org === 1 && id === 3 ? 'in_progress' : 'open']),
      );
    }
  });
});

describe('list tickets', () => {
  test('when paging 55 tickets with limit=20 while new ones arrive, then 20, 20, 15, newest first, no duplicates or gaps', async () => {
    const key = await stack.orgWithKey('paging');
    const created: number[] = [];
    for (let i = 0; i < 55; i++)
      created.push((await create(key, { content: `ticket ${i}` })).json.ticket_id);
    const seen: number[] = [];
    const sizes: number[] = [];
    let cursor: string | null = null;
    let page = 0;
    do {
      const q: string = cursor ? `limit=20&cursor=${encodeURIComponent(cursor)}` : 'limit=20';
      const res = await api(stack.baseUrl(), 'GET', `/api/v1/agent/tickets?${q}`, { key });
      assert.equal(res.status, 200);
      sizes.push(res.json.tickets.length);
      seen.push(...res.json.tickets.map((t: { id: number }) => t.id));
      for (let i = 1; i < res.json.tickets.length; i++) {
        const [prev, cur] = [res.json.tickets[i - 1], res.json.tickets[i]];
        assert.ok(
          prev.created_at > cur.created_at ||
            (prev.created_at === cur.created_at && prev.id > cur.id),
          'newest first',
        );
      }
      cursor = res.json.next_cursor;
      // New tickets between pages must not shift later pages.
      await create(key, { content: `interleaved ${page++}` });
    } while (cursor !== null);
    assert.deepEqual(sizes, [20, 20, 15]);
    assert.deepEqual(seen, [...created].reverse());
  });

  test('when a cursor is tampered with, forged, or replayed by another organization, then 400 invalid_cursor', async () => {
    const key = await stack.orgWithKey('cursor-a');
    const other = await stack.orgWithKey('cursor-b');
    for (let i = 0; i < 3; i++) await create(key, { content: `c${i}` });
    const first = await api(stack.baseUrl(), 'GET', '/api/v1/agent/tickets?limit=1', { key });
    const cursor: string = first.json.next_cursor;
    assert.equal(typeof cursor, 'string');
    const flipped = cursor.slice(0, -2) + (cursor.at(-2) === 'A' ? 'B' : 'A') + cursor.at(-1);
    for (const bad of [
      flipped,
      'garbage',
      cursor + 'x',
      Buffer.from('{"id":1}').toString('base64url'),
    ]) {
      const res = await api(
        stack.baseUrl(),
        'GET',
        `/api/v1/agent/tickets?cursor=${encodeURIComponent(bad)}`,
        { key },
      );
      assert.equal(res.status, 400, bad);
      assert.equal(res.json.error.code, 'invalid_cursor');
    }
    const replay = await api(
      stack.baseUrl(),
      'GET',
      `/api/v1/agent/tickets?cursor=${encodeURIComponent(cursor)}`,
      { key: other },
    );
    assert.equal(replay.status, 400);
    assert.equal(replay.json.error.code, 'invalid_cursor');
    const good = await api(
      stack.baseUrl(),
      'GET',
      `/api/v1/agent/tickets?limit=1&cursor=${encodeURIComponent(cursor)}`,
      { key },
    );
    assert.equal(good.status, 200);
  });

  test('when filters are combined, then they are AND-ed', async () => {
    const key = await stack.orgWithKey('filters');
    const ids: number[] = [];
    for (let i = 0; i < 4; i++) ids.push((await create(key, { content: `f${i}` })).json.ticket_id);
    await stack.admin('PATCH', `/admin/v1/orgs/filters/tickets/${ids[0]}`, {
      status: 'in_progress',
    });
    await stack.admin('PATCH', `/admin/v1/orgs/filters/tickets/${ids[1]}`, {
      status: 'in_progress',
    });
    await stack.admin('PATCH', `/admin/v1/orgs/filters/tickets/${ids[1]}`, { status: 'resolved' });
    const inProgress = await api(
      stack.baseUrl(),
      'GET',
      '/api/v1/agent/tickets?status=in_progress',
      { key },
    );
    assert.deepEqual(
      inProgress.json.tickets.map((t: { id: number }) => t.id),
      [ids[0]],
    );
    const both = await api(
      stack.baseUrl(),
      'GET',
      '/api/v1/agent/tickets?status=open&priority=medium',
      { key },
    );
    assert.deepEqual(
      both.json.tickets.map((t: { id: number }) => t.id),
      [ids[3], ids[2]],
    );
    const none = await api(
      stack.baseUrl(),
      'GET',
      '/api/v1/agent/tickets?status=open&priority=high',
      { key },
    );
    assert.deepEqual(none.json.tickets, []);
    const cat = await api(
      stack.baseUrl(),
      'GET',
      '/api/v1/agent/tickets?status=open&category=bug',
      { key },
    );
    assert.deepEqual(cat.json.tickets, []);
  });

  test('when two organizations have tickets, then neither ever sees the other', async () => {
    const a = await stack.orgWithKey('iso-a');
    const b = await stack.orgWithKey('iso-b');
    for (let i = 0; i < 5; i++) {
      await create(a, { content: `secret of A ${i}` });
      await create(b, { content: `secret of B ${i}` });
    }
    const la = await api(stack.baseUrl(), 'GET', '/api/v1/agent/tickets?limit=20', { key: a });
    const lb = await api(stack.baseUrl(), 'GET', '/api/v1/agent/tickets?limit=20', { key: b });
    assert.equal(la.json.tickets.length, 5);
    assert.equal(lb.json.tickets.length, 5);
    assert.ok(
      la.json.tickets.every((t: { content: string }) => t.content.startsWith('secret of A')),
    );
    assert.ok(
      lb.json.tickets.every((t: { content: string }) => t.content.startsWith('secret of B')),
    );
    assert.ok(!la.text.includes('secret of B'));
  });

  test('when a status transition is not allowed, then the admin API answers 409 and the status is unchanged', async () => {
    const key = await stack.orgWithKey('transitions');
    const id = (await create(key, { content: 't' })).json.ticket_id;
    const bad = await fetch(`${stack.adminUrl()}/admin/v1/orgs/transitions/tickets/${id}`, {
      method: 'PATCH',
      headers: { authorization: `Bearer ${stack.adminToken}`, 'content-type': 'application/json' },
      body: JSON.stringify({ status: 'closed' }),
    });
    assert.equal(bad.status, 409);
    assert.equal(((await bad.json()) as { error: { code: string } }).error.code, 'conflict');
    for (const status of ['in_progress', 'resolved', 'open', 'duplicate']) {
      const t = await stack.admin<{ status: string }>(
        'PATCH',
        `/admin/v1/orgs/transitions/tickets/${id}`,
        { status },
      );
      assert.equal(t.status, status);
    }
    const list = await api(stack.baseUrl(), 'GET', '/api/v1/agent/tickets?status=duplicate', {
      key,
    });
    assert.deepEqual(
      list.json.tickets.map((t: { id: number }) => t.id),
      [id],
    );
  });
});
