// End-to-end: the gateway + tickets processes on real MariaDB, Redis and NATS,
// driven over HTTP. Authentication, scopes, the error contract and validation.
import { test, before, after, describe } from 'node:test';
import assert from 'node:assert/strict';
import mysql from 'mysql2/promise';
import { Stack, api } from '../support/stack.js';

let stack: Stack;
let key: string;
let readOnlyKey: string;
const ORG = 'acme';

async function ticketCount(): Promise<number> {
  const conn = await mysql.createConnection({ uri: stack.mysqlUrl });
  try {
    const [rows] = await conn.query('SELECT COUNT(*) AS n FROM tickets');
    return Number((rows as Array<{ n: number }>)[0]!.n);
  } finally {
    await conn.end();
  }
}

before(async () => {
  stack = await Stack.onTestBackends('e2e-auth', {
    nats: 'shared',
    services: ['tickets', 'knowledge'],
  });
  key = await stack.orgWithKey(ORG);
  readOnlyKey = await stack.keyFor(ORG, ['tickets:read']);
});

after(() => stack?.stop());

const RESOURCE_METADATA = () =>
  `resource_metadata="${stack.baseUrl()}/.well-known/oauth-protected-resource"`;

describe('prefixes', () => {
  test('when the same requests go to /api/v1/agent and /api/agent, then the bodies are byte-identical (a 404 names the path as sent)', async () => {
    await api(stack.baseUrl(), 'POST', '/api/v1/agent/tickets', {
      key,
      body: { content: 'prefix check one' },
    });
    await api(stack.baseUrl(), 'POST', '/api/agent/tickets', {
      key,
      body: { content: 'prefix check two' },
    });
    for (const path of [
      '/tickets',
      '/tickets?limit=1',
      '/tickets?status=open&limit=2',
      '/tickets?limit=0',
      '/nope',
    ]) {
      const v1 = await api(stack.baseUrl(), 'GET', `/api/v1/agent${path}`, { key });
      const plain = await api(stack.baseUrl(), 'GET', `/api/agent${path}`, { key });
      assert.equal(v1.status, plain.status, path);
      // Only the 404 message depends on the prefix: it repeats the path the client sent.
      assert.equal(
        v1.text.replace(`/api/v1/agent${path}`, path),
        plain.text.replace(`/api/agent${path}`, path),
        path,
      );
    }
    const a = await api(stack.baseUrl(), 'GET', '/api/v1/agent/tickets', { key });
    assert.equal(a.status, 200);
    assert.equal(a.json.tickets.length, 2);
  });
});

describe('authentication', () => {
  test('when no key is sent, then 401 unauthorized with the realm challenge and no error attribute', async () => {
    const res = await api(stack.baseUrl(), 'GET', '/api/v1/agent/tickets');
    assert.equal(res.status, 401);
    assert.equal(res.json.error.code, 'unauthorized');
    assert.equal(
      res.headers.get('www-authenticate'),
      `Bearer realm="support-agent", ${RESOURCE_METADATA()}`,
    );
    assert.match(res.headers.get('content-type') ?? '', /^application\/json/);
  });

  test('when a malformed, unknown or bad-checksum key is sent, then 401 with error="invalid_token"', async () => {
    const unknown = 'sak_live_' + 'A'.repeat(32) + key.slice(-6);
    const badChecksum = key.slice(0, -1) + (key.endsWith('a') ? 'b' : 'a');
    for (const bad of ['nonsense', unknown, badChecksum, `${key}x`]) {
      const res = await api(stack.baseUrl(), 'GET', '/api/v1/agent/tickets', { key: bad });
      assert.equal(res.status, 401, bad);
      assert.equal(res.json.error.code, 'unauthorized');
      assert.equal(
        res.headers.get('www-authenticate'),
        `Bearer realm="support-agent", ${RESOURCE_METADATA()}, error="invalid_token"`,
      );
    }
  });

  test('when the scheme is lower-case bearer, then the key is accepted', async () => {
    const res = await api(stack.baseUrl(), 'GET', '/api/v1/agent/tickets', {
      headers: { authorization: `bearer ${key}` },
    });
    assert.equal(res.status, 200);
  });

  test('when a key is revoked, then it gets 401 within a second', async () => {
    const { id, key: revocable } = await stack.createKey(ORG, ['tickets:read']);
    assert.equal(
      (await api(stack.baseUrl(), 'GET', '/api/v1/agent/tickets', { key: revocable })).status,
      200,
    );
    await stack.admin('DELETE', `/admin/v1/orgs/${ORG}/keys/${id}`);
    await new Promise((r) => setTimeout(r, 1_000));
    const res = await api(stack.baseUrl(), 'GET', '/api/v1/agent/tickets', { key: revocable });
    assert.equal(res.status, 401);
    assert.equal(res.json.error.code, 'unauthorized');
    assert.match(res.headers.get('www-authenticate') ?? '', /error="invalid_token"/);
  });
});

describe('scopes', () => {
  test('when a key lacks tickets:write, then 403 insufficient_scope with the scope challenge and nothing written', async () => {
    const before = await ticketCount();
    const res = await api(stack.baseUrl(), 'POST', '/api/v1/agent/tickets', {
      key: readOnlyKey,
      body: { content: 'x' },
    });
    assert.equal(res.status, 403);
    assert.equal(res.json.error.code, 'insufficient_scope');
    assert.equal(
      res.headers.get('www-authenticate'),
      `Bearer error="insufficient_scope", scope="tickets:write", ${RESOURCE_METADATA()}`,
    );
    assert.equal(await ticketCount(), before);
  });

  test('when a key lacks a scope, then 403 comes before validation errors', async () => {
    const res = await api(stack.baseUrl(), 'POST', '/api/v1/agent/tickets', {
      key: readOnlyKey,
      rawBody: '{bad json',
      headers: { 'content-type': 'application/json' },
    });
    assert.equal(res.status, 403);
  });
});

describe('error contract', () => {
  test('when a path is unknown, then 404 not_found as JSON', async () => {
    for (const path of ['/nope', '/api/v1/agent/nope', '/api/v2/agent/tickets']) {
      const res = await api(stack.baseUrl(), 'GET', path, { key });
      assert.equal(res.status, 404, path);
      assert.equal(res.json.error.code, 'not_found');
    }
  });

  test('when the method is wrong, then 405 method_not_allowed with Allow', async () => {
    const res = await api(stack.baseUrl(), 'DELETE', '/api/v1/agent/tickets', { key });
    assert.equal(res.status, 405);
    assert.equal(res.json.error.code, 'method_not_allowed');
    assert.match(res.headers.get('allow') ?? '', /GET/);
    assert.match(res.headers.get('allow') ?? '', /POST/);
  });

  test('when the JSON is malformed or the content type wrong, then 400 invalid_request and nothing written', async () => {
    const before = await ticketCount();
    const malformed = await api(stack.baseUrl(), 'POST', '/api/v1/agent/tickets', {
      key,
      rawBody: '{"content": "x"',
      headers: { 'content-type': 'application/json' },
    });
    assert.equal(malformed.status, 400);
    assert.equal(malformed.json.error.code, 'invalid_request');
    const wrongType = await api(stack.baseUrl(), 'POST', '/api/v1/agent/tickets', {
      key,
      rawBody: 'content=x',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
    });
    assert.equal(wrongType.status, 400);
    assert.equal(wrongType.json.error.code, 'invalid_request');
    const notObject = await api(stack.baseUrl(), 'POST', '/api/v1/agent/tickets', {
      key,
      rawBody: '["x"]',
      headers: { 'content-type': 'application/json' },
    });
    assert.equal(notObject.status, 400);
    assert.equal(await ticketCount(), before);
  });

  test('when the body is over 64 KiB, then 413 payload_too_large', async () => {
    const body = JSON.stringify({ content: 'x', pad: 'y'.repeat(70_000) });
    const res = await api(stack.baseUrl(), 'POST', '/api/v1/agent/tickets', {
      key,
      rawBody: body,
      headers: { 'content-type': 'application/json' },
    });
    assert.equal(res.status, 413);
    assert.equal(res.json.error.code, 'payload_too_large');
  });

  test('when a client sends a sane X-Request-Id, then it is echoed; otherwise one is generated', async () => {
    const echoed = await api(stack.baseUrl(), 'GET', '/api/v1/agent/tickets', {
      key,
      headers: { 'x-request-id': 'req-123' },
    });
    assert.equal(echoed.headers.get('x-request-id'), 'req-123');
    const generated = await api(stack.baseUrl(), 'GET', '/api/v1/agent/tickets', {
      key,
      headers: { 'x-request-id': 'bad id with spaces' },
    });
    assert.match(generated.headers.get('x-request-id') ?? '', /^[0-9a-f-]{36}$/);
  });
});

describe('validation at the limits of API.md', () => {
  const emoji = '😀'; // one code point, two UTF-16 units

  test('when content is 4000 code points it is accepted; 4001 is 400 naming content and writes nothing', async () => {
    const ok = await api(stack.baseUrl(), 'POST', '/api/v1/agent/tickets', {
      key,
      body: { content: emoji.repeat(4000) },
    });
    assert.equal(ok.status, 201);
    const before = await ticketCount();
    const tooLong = await api(stack.baseUrl(), 'POST', '/api/v1/agent/tickets', {
      key,
      body: { content: emoji.repeat(4001) },
    });
    assert.equal(tooLong.status, 400);
    assert.equal(tooLong.json.error.code, 'invalid_request');
    assert.equal(tooLong.json.error.param, 'content');
    for (const content of [undefined, '', '   \n\t', 42, null, ['x']]) {
      const res = await api(stack.baseUrl(), 'POST', '/api/v1/agent/tickets', {
        key,
        body: { content },
      });
      assert.equal(res.status, 400, JSON.stringify(content));
      assert.equal(res.json.error.param, 'content');
    }
    assert.equal(await ticketCount(), before);
  });

  test('when the idempotency key is 200 characters it is accepted; 201 is 400 naming it (header and body)', async () => {
    const ok = await api(stack.baseUrl(), 'POST', '/api/v1/agent/tickets', {
      key,
      body: { content: 'k200', idempotencyKey: 'k'.repeat(200) },
    });
    assert.equal(ok.status, 201);
    const before = await ticketCount();
    const body = await api(stack.baseUrl(), 'POST', '/api/v1/agent/tickets', {
      key,
      body: { content: 'k201', idempotencyKey: 'k'.repeat(201) },
    });
    assert.equal(body.status, 400);
    assert.equal(body.json.error.param, 'idempotencyKey');
    const header = await api(stack.baseUrl(), 'POST', '/api/v1/agent/tickets', {
      key,
      body: { content: 'k201' },
      headers: { 'idempotency-key': 'k'.repeat(201) },
    });
    assert.equal(header.status, 400);
    assert.equal(header.json.error.param, 'Idempotency-Key');
    assert.equal(await ticketCount(), before);
  });

  test('when limit is 0, 21, abc, 1.5 or repeated, then 400 naming limit; 1 and 20 are accepted', async () => {
    for (const q of [
      'limit=0',
      'limit=21',
      'limit=abc',
      'limit=1.5',
      'limit=-1',
      'limit=+5',
      'limit=1&limit=2',
    ]) {
      const res = await api(stack.baseUrl(), 'GET', `/api/v1/agent/tickets?${q}`, { key });
      assert.equal(res.status, 400, q);
      assert.equal(res.json.error.code, 'invalid_request');
      assert.equal(res.json.error.param, 'limit');
    }
    for (const q of ['limit=1', 'limit=20']) {
      const res = await api(stack.baseUrl(), 'GET', `/api/v1/agent/tickets?${q}`, { key });
      assert.equal(res.status, 200, q);
    }
  });

  test('when a filter value is unknown or malformed, then 400 naming the filter; duplicate is a valid status and a category no ticket has an empty page', async () => {
    for (const [param, value] of [
      ['status', 'pending'],
      ['priority', 'urgent'],
      // Category names are the organization's own: any name of their form is a filter, another
      // form is not.
      ['category', 'bill%3Cing'],
    ] as const) {
      const res = await api(stack.baseUrl(), 'GET', `/api/v1/agent/tickets?${param}=${value}`, {
        key,
      });
      assert.equal(res.status, 400);
      assert.equal(res.json.error.param, param);
    }
    const dup = await api(stack.baseUrl(), 'GET', '/api/v1/agent/tickets?status=duplicate', {
      key,
    });
    assert.equal(dup.status, 200);
    assert.deepEqual(dup.json, { tickets: [], next_cursor: null });
    const unused = await api(stack.baseUrl(), 'GET', '/api/v1/agent/tickets?category=billing', {
      key,
    });
    assert.equal(unused.status, 200);
    assert.deepEqual(unused.json, { tickets: [], next_cursor: null });
  });

  test('when KB search query is 2000 code points it passes validation; 2001 is 400 naming query', async () => {
    const tooLong = await api(
      stack.baseUrl(),
      'GET',
      `/api/v1/agent/kb/search?query=${encodeURIComponent('é'.repeat(2001))}`,
      { key },
    );
    assert.equal(tooLong.status, 400);
    assert.equal(tooLong.json.error.param, 'query');
    const ok = await api(
      stack.baseUrl(),
      'GET',
      `/api/v1/agent/kb/search?query=${encodeURIComponent('é'.repeat(2000))}`,
      { key },
    );
    assert.notEqual(ok.status, 400);
  });
});
