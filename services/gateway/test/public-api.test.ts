// Component tests of the public HTTP API against real MariaDB and Redis, with canned gRPC
// upstreams. Run through `npm test` (TEST_MYSQL_URL, TEST_REDIS_URL).
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { metricsRegistry } from '@support-agent/shared';
import { createTestDatabase } from '../../../test/support/mysql.js';
import { generateApiKey } from '../src/domain/api-keys.js';
import {
  REJECTED_CONTENT,
  startFakeUpstreams,
  UNAVAILABLE_QUERY,
  type FakeUpstreams,
} from './support/fake-upstreams.js';
import {
  admin,
  orgWithKey,
  request,
  requireEnv,
  startGateway,
  TEST_BASE_URL,
  type HttpResult,
  type TestGateway,
} from './support/gateway.js';
import { stopAll } from '../../../test/support/testing.js';

const RESOURCE_METADATA = `${TEST_BASE_URL}/.well-known/oauth-protected-resource`;
const CHALLENGE_401 = `Bearer realm="support-agent", resource_metadata="${RESOURCE_METADATA}"`;
const PREFIXES = ['/api/v1/agent', '/api/agent'];

let db: Awaited<ReturnType<typeof createTestDatabase>>;
let upstreams: FakeUpstreams;
let gw: TestGateway;
let down: TestGateway; // a gateway whose upstreams are all unreachable
let key: string; // every scope
let orgId: string;
let kbOnlyKey: string;

const api = (path: string, opts: Parameters<typeof request>[1] = {}) =>
  request(`${gw.base}/api/v1/agent${path}`, { key, ...opts });

function assertError(res: HttpResult, status: number, code: string, param?: string): void {
  assert.equal(res.status, status, res.text);
  assert.match(res.headers.get('content-type') ?? '', /^application\/json\b/);
  assert.equal(res.json?.error?.code, code, res.text);
  assert.equal(typeof res.json.error.message, 'string');
  if (param !== undefined) assert.equal(res.json.error.param, param, res.text);
}

/** Runs `fn` and asserts no upstream call happened meanwhile. */
async function withoutUpstream<T>(fn: () => Promise<T>): Promise<T> {
  const before = upstreams.totalCalls();
  const result = await fn();
  assert.equal(upstreams.totalCalls(), before, 'the upstream must not be called');
  return result;
}

before(async () => {
  db = await createTestDatabase('gw');
  upstreams = await startFakeUpstreams();
  const env = { MYSQL_URL: db.url, REDIS_URL: requireEnv('TEST_REDIS_URL') };
  gw = await startGateway({ ...env, UPSTREAM: upstreams.address });
  down = await startGateway({ ...env, UPSTREAM: '127.0.0.1:1', GRPC_DEADLINE_MS: '500' });
  ({ key, orgId } = await orgWithKey(gw));
  ({ key: kbOnlyKey } = await orgWithKey(gw, ['kb:read']));
});

after(() => stopAll(gw, down, upstreams, db));

describe('authentication', () => {
  it('when no Authorization header is sent, then 401 with the bare challenge and no rate-limit headers', async () => {
    const res = await api('/kb/search?query=x', { key: undefined });
    assertError(res, 401, 'unauthorized');
    assert.equal(res.headers.get('www-authenticate'), CHALLENGE_401);
    assert.equal(res.headers.get('ratelimit'), null);
  });

  it('when another scheme or an empty bearer is sent, then 401 without error="invalid_token"', async () => {
    for (const authorization of ['Basic dXNlcjpwYXNz', 'Bearer ', 'Bearer']) {
      const res = await api('/faq', { key: undefined, headers: { authorization } });
      assertError(res, 401, 'unauthorized');
      assert.equal(res.headers.get('www-authenticate'), CHALLENGE_401);
    }
  });

  it('when a malformed key, a bad checksum or an unknown key is sent, then 401 with error="invalid_token"', async () => {
    const good = generateApiKey();
    const badChecksum = good.slice(0, -1) + (good.endsWith('A') ? 'B' : 'A');
    for (const k of ['garbage', 'sak_live_short', badChecksum, good]) {
      const res = await api('/kb/search?query=x', { key: k });
      assertError(res, 401, 'unauthorized');
      assert.equal(res.headers.get('www-authenticate'), `${CHALLENGE_401}, error="invalid_token"`);
    }
  });

  it('when the scheme is written in another case, then the key is accepted', async () => {
    for (const scheme of ['bearer', 'BEARER']) {
      const res = await api('/faq', {
        key: undefined,
        headers: { authorization: `${scheme} ${key}` },
      });
      assert.equal(res.status, 200, res.text);
    }
  });

  it('when the key lacks the scope, then 403 insufficient_scope with the scope challenge', async () => {
    const cases: Array<[string, string, string]> = [
      ['GET', '/faq', 'faq:read'],
      ['GET', '/tickets', 'tickets:read'],
      ['POST', '/tickets', 'tickets:write'],
      ['POST', '/answers', 'answers:write'],
    ];
    for (const [method, path, scope] of cases) {
      const body = method === 'POST' ? { content: 'x', question: 'x' } : undefined;
      const res = await withoutUpstream(() => api(path, { method, key: kbOnlyKey, body }));
      assertError(res, 403, 'insufficient_scope');
      assert.equal(
        res.headers.get('www-authenticate'),
        `Bearer error="insufficient_scope", scope="${scope}", resource_metadata="${RESOURCE_METADATA}"`,
      );
    }
    const ok = await api('/kb/search?query=reset', { key: kbOnlyKey });
    assert.equal(ok.status, 200);
  });
});

describe('routing and errors', () => {
  it('when the same request is sent under both prefixes, then the bodies are byte-identical (a 404 names the path as sent)', async () => {
    // Seed an idempotency key so both prefixes see the same replayed result.
    await api('/tickets', {
      method: 'POST',
      body: { content: 'seed' },
      headers: { 'idempotency-key': 'same-both' },
    });
    const requests: Array<[string, Parameters<typeof request>[1]]> = [
      ['/kb/search?query=reset&limit=2', {}],
      ['/faq', {}],
      ['/tickets?limit=1', {}],
      ['/tickets?cursor=c1', {}],
      [
        '/tickets',
        { method: 'POST', body: { content: 'x' }, headers: { 'idempotency-key': 'same-both' } },
      ],
      ['/answers', { method: 'POST', body: { question: 'How do I reset my password?' } }],
      ['/answers', { method: 'POST', body: { question: 'with sources please' } }],
      ['/kb/search?limit=0', {}],
      [
        '/tickets',
        { method: 'POST', body: '{bad json', headers: { 'content-type': 'application/json' } },
      ],
      ['/tickets', { method: 'DELETE' }],
      ['/nope', {}],
      ['/faq', { key: undefined }],
      ['/faq', { key: kbOnlyKey }],
    ];
    for (const [path, opts] of requests) {
      const [a, b] = await Promise.all(
        PREFIXES.map((p) => request(`${gw.base}${p}${path}`, { key, ...opts })),
      );
      assert.equal(a!.status, b!.status, path);
      // Only the 404 message depends on the prefix: it repeats the path the client sent.
      const asSent = (text: string, prefix: string) => text.replace(`${prefix}${path}`, path);
      assert.equal(
        asSent(a!.text, PREFIXES[0]!),
        asSent(b!.text, PREFIXES[1]!),
        `${opts?.method ?? 'GET'} ${path}`,
      );
      assert.equal(a!.headers.get('content-type'), b!.headers.get('content-type'));
    }
  });

  it('when the path is unknown anywhere, then 404 not_found as JSON, before authentication', async () => {
    for (const path of [
      '/foo',
      '/api/v1/agent/nope',
      '/api/v1/agent',
      '/api/agent/kb',
      '/api/v2/agent/faq',
      '/',
    ]) {
      const res = await request(`${gw.base}${path}`);
      assertError(res, 404, 'not_found');
      assert.doesNotMatch(res.text, /<html|at .*\.js/i);
    }
  });

  it('when the method is wrong on a known path, then 405 with Allow, before authentication', async () => {
    const cases: Array<[string, string, string]> = [
      ['DELETE', '/api/v1/agent/tickets', 'GET, HEAD, POST'],
      ['PUT', '/api/agent/kb/search', 'GET, HEAD'],
      ['POST', '/api/v1/agent/faq', 'GET, HEAD'],
      ['GET', '/api/v1/agent/answers', 'POST'],
      ['POST', '/healthz', 'GET, HEAD'],
    ];
    for (const [method, path, allow] of cases) {
      const res = await request(`${gw.base}${path}`, { method });
      assertError(res, 405, 'method_not_allowed');
      assert.equal(res.headers.get('allow'), allow);
    }
  });

  it('when the URL is too long for the server, then the answer is still a JSON error', async () => {
    const res = await api(`/kb/search?query=${'x'.repeat(70_000)}`);
    assert.equal(res.status, 431);
    assert.equal(res.json.error.code, 'invalid_request');
    assert.match(res.headers.get('content-type') ?? '', /^application\/json/);
  });

  it('when any response is sent, then it has nosniff, a request id and no X-Powered-By', async () => {
    for (const path of ['/healthz', '/foo', '/api/v1/agent/faq']) {
      const res = await request(`${gw.base}${path}`);
      assert.equal(res.headers.get('x-content-type-options'), 'nosniff');
      assert.equal(res.headers.get('x-powered-by'), null);
      assert.match(res.headers.get('x-request-id') ?? '', /^[0-9a-f-]{36}$/);
    }
  });

  it('when the client sends a sane X-Request-Id, then it is echoed and passed upstream; else replaced', async () => {
    upstreams.reset();
    const sane = 'req-123.abc:XYZ_';
    const res = await api('/kb/search?query=reset', { headers: { 'x-request-id': sane } });
    assert.equal(res.headers.get('x-request-id'), sane);
    assert.deepEqual(upstreams.requestIds, [sane]);
    for (const bad of ['has space', 'x'.repeat(129), 'semi;colon']) {
      const r = await api('/faq', { headers: { 'x-request-id': bad } });
      assert.match(r.headers.get('x-request-id') ?? '', /^[0-9a-f-]{36}$/);
    }
  });
});

describe('request bodies', () => {
  it('when the JSON is malformed, then 400 invalid_request without calling upstream', async () => {
    for (const body of ['{bad json', '{"content": "x",}', "{'content':'x'}"]) {
      const res = await withoutUpstream(() =>
        api('/tickets', { method: 'POST', body, headers: { 'content-type': 'application/json' } }),
      );
      assertError(res, 400, 'invalid_request');
    }
  });

  it('when the content type is not application/json, then 400 invalid_request', async () => {
    for (const type of [
      'text/plain',
      'application/x-www-form-urlencoded',
      'application/jsonx',
      undefined,
    ]) {
      const res = await withoutUpstream(() =>
        api('/answers', {
          method: 'POST',
          body: '{"question":"hi"}',
          headers: type ? { 'content-type': type } : {},
        }),
      );
      assertError(res, 400, 'invalid_request');
    }
    const ok = await api('/answers', {
      method: 'POST',
      body: '{"question":"hi"}',
      headers: { 'content-type': 'application/json; charset=utf-8' },
    });
    assert.equal(ok.status, 200, ok.text);
  });

  it('when the JSON body is not an object, then 400 invalid_request', async () => {
    for (const body of ['[]', '"text"', '1', 'null', '']) {
      const res = await withoutUpstream(() =>
        api('/tickets', { method: 'POST', body, headers: { 'content-type': 'application/json' } }),
      );
      assertError(res, 400, 'invalid_request');
    }
  });

  it('when the body is exactly 64 KiB it is accepted, and one byte more gives 413', async () => {
    const make = (size: number) => {
      const prefix = '{"content":"padded","pad":"';
      const suffix = '"}';
      return prefix + 'x'.repeat(size - prefix.length - suffix.length) + suffix;
    };
    const okBody = make(65536);
    assert.equal(Buffer.byteLength(okBody), 65536);
    const ok = await api('/tickets', {
      method: 'POST',
      body: okBody,
      headers: { 'content-type': 'application/json' },
    });
    assert.equal(ok.status, 201, ok.text);
    const tooBig = await withoutUpstream(() =>
      api('/tickets', {
        method: 'POST',
        body: make(65537),
        headers: { 'content-type': 'application/json' },
      }),
    );
    assertError(tooBig, 413, 'payload_too_large');
  });

  it('when an oversized body comes without a key, then 401 wins (bodies are read after auth)', async () => {
    const res = await api('/tickets', {
      method: 'POST',
      key: undefined,
      body: `{"content":"${'x'.repeat(70_000)}"}`,
      headers: { 'content-type': 'application/json' },
    });
    assertError(res, 401, 'unauthorized');
  });
});

describe('validation', () => {
  const emoji = (n: number) => '😀'.repeat(n);

  it('when the search query is 1..2000 code points it passes; missing, blank or 2001 gives 400 query', async () => {
    for (const q of ['a', 'x'.repeat(2000), emoji(2000)]) {
      const res = await api(`/kb/search?query=${encodeURIComponent(q)}`);
      assert.equal(res.status, 200, res.text.slice(0, 200));
    }
    for (const q of ['', '%20%20', encodeURIComponent(emoji(2001)), 'x'.repeat(2001)]) {
      const res = await withoutUpstream(() => api(`/kb/search?query=${q}`));
      assertError(res, 400, 'invalid_request', 'query');
    }
    assertError(await withoutUpstream(() => api('/kb/search')), 400, 'invalid_request', 'query');
    assertError(
      await withoutUpstream(() => api('/kb/search?query=a&query=b')),
      400,
      'invalid_request',
      'query',
    );
  });

  it('when limit is 1 or 20 it passes; 0, 21, abc, 1.5, signed or repeated gives 400 limit', async () => {
    upstreams.reset();
    for (const limit of ['1', '20']) {
      assert.equal((await api(`/kb/search?query=x&limit=${limit}`)).status, 200);
      assert.equal((await api(`/tickets?limit=${limit}`)).status, 200);
    }
    assert.deepEqual(
      upstreams.calls.search.map((c) => c.limit),
      [1, 20],
    );
    assert.deepEqual(
      upstreams.calls.listTickets.map((c) => c.limit),
      [1, 20],
    );
    for (const bad of ['0', '21', 'abc', '1.5', '-1', '+5', '1e1', '1&limit=2']) {
      assertError(
        await withoutUpstream(() => api(`/kb/search?query=x&limit=${bad}`)),
        400,
        'invalid_request',
        'limit',
      );
      assertError(
        await withoutUpstream(() => api(`/tickets?limit=${bad}`)),
        400,
        'invalid_request',
        'limit',
      );
    }
  });

  it('when limit is omitted or empty, then the defaults 5 (search) and 10 (tickets) are sent upstream', async () => {
    upstreams.reset();
    await api('/kb/search?query=x');
    await api('/tickets');
    await api('/kb/search?query=x&limit=');
    await api('/tickets?limit=%20');
    assert.deepEqual(
      upstreams.calls.search.map((c) => c.limit),
      [5, 5],
    );
    assert.deepEqual(
      upstreams.calls.listTickets.map((c) => c.limit),
      [10, 10],
    );
  });

  it('when ticket filters are invalid, then 400 naming the filter; valid ones are passed upstream', async () => {
    for (const [param, value] of [
      ['status', 'pending'],
      ['priority', 'urgent'],
      // An organization's own category names may be any case; a name of another form is not one.
      ['category', 'a%3Cb'],
      ['category', 'x'.repeat(33)],
    ]) {
      assertError(
        await withoutUpstream(() => api(`/tickets?${param}=${value}`)),
        400,
        'invalid_request',
        param,
      );
    }
    upstreams.reset();
    const res = await api('/tickets?status=duplicate&priority=low&category=how_to&unknown=1');
    assert.equal(res.status, 200);
    assert.deepEqual(upstreams.calls.listTickets[0], {
      orgId,
      status: 'duplicate',
      priority: 'low',
      category: 'how_to',
      limit: 10,
      cursor: undefined,
    });
  });

  it('when ticket content is 1..4000 code points it passes; missing, blank, 4001 or not a string gives 400 content', async () => {
    for (const content of ['x', emoji(4000), 'y'.repeat(4000)]) {
      const res = await api('/tickets', { method: 'POST', body: { content } });
      assert.equal(res.status, 201, res.text.slice(0, 200));
    }
    for (const body of [
      {},
      { content: '' },
      { content: ' \n\t ' },
      { content: emoji(4001) },
      { content: 5 },
      { content: ['x'] },
    ]) {
      const res = await withoutUpstream(() => api('/tickets', { method: 'POST', body }));
      assertError(res, 400, 'invalid_request', 'content');
    }
  });

  it('when authorName or idempotency keys exceed 200 code points, then 400 naming them', async () => {
    assert.equal(
      (await api('/tickets', { method: 'POST', body: { content: 'a', authorName: emoji(200) } }))
        .status,
      201,
    );
    assert.equal(
      (
        await api('/tickets', {
          method: 'POST',
          body: { content: 'a', idempotencyKey: emoji(200) },
        })
      ).status,
      201,
    );
    const cases: Array<[Parameters<typeof request>[1], string]> = [
      [{ body: { content: 'a', authorName: emoji(201) } }, 'authorName'],
      [{ body: { content: 'a', authorName: 7 } }, 'authorName'],
      [{ body: { content: 'a', idempotencyKey: 'k'.repeat(201) } }, 'idempotencyKey'],
      [
        { body: { content: 'a' }, headers: { 'idempotency-key': 'k'.repeat(201) } },
        'Idempotency-Key',
      ],
      [
        { body: { content: 'a' }, headers: { 'idempotency-key': '"unterminated' } },
        'Idempotency-Key',
      ],
    ];
    for (const [opts, param] of cases) {
      const res = await withoutUpstream(() => api('/tickets', { method: 'POST', ...opts }));
      assertError(res, 400, 'invalid_request', param);
    }
  });

  it('when the question is 1..2000 code points it passes; missing, blank or 2001 gives 400 question', async () => {
    assert.equal(
      (await api('/answers', { method: 'POST', body: { question: emoji(2000) } })).status,
      200,
    );
    for (const body of [
      {},
      { question: '  ' },
      { question: emoji(2001) },
      { question: null },
      { question: 1 },
    ]) {
      const res = await withoutUpstream(() => api('/answers', { method: 'POST', body }));
      assertError(res, 400, 'invalid_request', 'question');
    }
  });

  it('when a request fails validation, then it still carries rate-limit headers (it was counted)', async () => {
    const res = await api('/kb/search?limit=0&query=x');
    assert.equal(res.status, 400);
    assert.match(res.headers.get('ratelimit') ?? '', /^"(key|org)";r=\d+;t=\d+$/);
  });
});

describe('operations', () => {
  it('when the KB is searched, then results carry question, answer and score only', async () => {
    const res = await api('/kb/search?query=reset&limit=2');
    assert.equal(res.status, 200);
    assert.deepEqual(res.json, {
      results: [
        { question: 'How do I reset my password?', answer: 'Use the reset link.', score: 0.91 },
        { question: 'How do I export data?', answer: 'Settings → Export.', score: 0.42 },
      ],
    });
    assert.equal(upstreams.calls.search.at(-1)?.orgId, orgId);
  });

  it('when tickets are listed, then every key is present, nulls for unset values, and next_cursor', async () => {
    const first = await api('/tickets');
    assert.equal(first.status, 200);
    assert.deepEqual(first.json, {
      tickets: [
        {
          id: 42,
          content: 'The export button does nothing',
          category: 'bug',
          priority: 'high',
          status: 'open',
          ai_summary: 'Export broken',
          created_at: '2026-11-21T10:15:30.123Z',
        },
      ],
      next_cursor: 'c1',
    });
    const last = await api('/tickets?cursor=c1');
    assert.equal(last.json.next_cursor, null);
    assert.equal(last.json.tickets[0].category, null);
    assert.equal(last.json.tickets[0].ai_summary, null);
    assert.equal(upstreams.calls.listTickets.at(-1)?.cursor, 'c1');
  });

  it('when the cursor is forged, then 400 invalid_cursor from the service is passed through', async () => {
    assertError(await api('/tickets?cursor=forged'), 400, 'invalid_cursor', 'cursor');
    assertError(
      await withoutUpstream(() => api(`/tickets?cursor=${'c'.repeat(2000)}`)),
      400,
      'invalid_cursor',
      'cursor',
    );
  });

  it('when a ticket is created, then 201 with ticket_id and duplicate, and the org and author are passed', async () => {
    upstreams.reset();
    const res = await api('/tickets', {
      method: 'POST',
      body: { content: '  verbatim  ', authorName: 'Ann', extra: 1 },
    });
    assert.equal(res.status, 201);
    assert.equal(typeof res.json.ticket_id, 'number');
    assert.equal(res.json.duplicate, false);
    assert.deepEqual(upstreams.calls.createTicket[0], {
      orgId,
      content: '  verbatim  ',
      authorName: 'Ann',
      idempotencyKey: undefined,
    });
  });

  it('when the Idempotency-Key header and the body field are both given, then the header wins', async () => {
    upstreams.reset();
    const post = (headers: Record<string, string>, body: Record<string, unknown>) =>
      api('/tickets', { method: 'POST', headers, body: { content: 'c', ...body } });
    await post({ 'idempotency-key': 'from-header' }, { idempotencyKey: 'from-body' });
    await post({ 'idempotency-key': '"sf \\"quoted\\" key"' }, { idempotencyKey: 'from-body' });
    await post({}, { idempotencyKey: 'body-only' });
    await post({ 'idempotency-key': '""' }, { idempotencyKey: 'empty-header-falls-back' });
    assert.deepEqual(
      upstreams.calls.createTicket.map((c) => c.idempotencyKey),
      ['from-header', 'sf "quoted" key', 'body-only', 'empty-header-falls-back'],
    );
    const first = await post({ 'idempotency-key': 'repeat-me' }, {});
    const again = await post({ 'idempotency-key': '"repeat-me"' }, { content: 'other' });
    assert.equal(again.status, 201);
    assert.deepEqual(again.json, { ticket_id: first.json.ticket_id, duplicate: true });
  });

  it('when no digest exists, then the "none yet" body; when one exists, then the digest', async () => {
    const none = await api('/faq');
    assert.deepEqual(none.json, {
      message: 'No FAQ digest has been generated yet.',
      week_start: null,
      week_end: null,
      ticket_count: 0,
      content: null,
    });
    upstreams.digests.set(orgId, {
      orgId,
      weekStart: '2026-11-09',
      weekEnd: '2026-11-15',
      ticketCount: 12,
      content: '# FAQ',
      generatedAt: '2026-11-16T00:00:00.000Z',
    });
    const res = await api('/faq');
    assert.deepEqual(res.json, {
      message: 'FAQ digest for 2026-11-09 to 2026-11-15',
      week_start: '2026-11-09',
      week_end: '2026-11-15',
      ticket_count: 12,
      content: '# FAQ',
    });
    // The FAQ shows only the markdown: the digest's summary is not asked for.
    assert.deepEqual(upstreams.calls.getLatestDigest.at(-1), { orgId, withoutSummary: true });
  });

  it("when an answer is generated, then the org's policy is sent and the settings change applies within 1 s", async () => {
    upstreams.reset();
    const res = await api('/answers', {
      method: 'POST',
      body: { question: 'How do I reset my password?' },
    });
    assert.deepEqual(res.json, {
      answer: 'Use the reset link.',
      confidence: 88,
      answered_fully: true,
      high_confidence: true,
    });
    assert.deepEqual(upstreams.calls.generateAnswer[0]?.policy, {
      deflectionMonthlyLimit: 1000,
      highConfidenceThreshold: 85,
    });

    await admin(gw, 'PATCH', `/orgs/${orgId}/settings`, {
      high_confidence_threshold: 90,
      deflection_monthly_limit: 5,
    });
    await new Promise((r) => setTimeout(r, 1000));
    const later = await api('/answers', { method: 'POST', body: { question: 'with sources' } });
    assert.equal(later.json.high_confidence, false);
    assert.deepEqual(later.json.sources, [
      { question: 'How do I reset my password?', score: 0.91 },
    ]);
    assert.deepEqual(upstreams.calls.generateAnswer.at(-1)?.policy, {
      deflectionMonthlyLimit: 5,
      highConfidenceThreshold: 90,
    });
  });

  it('when the deflection limit is reached upstream, then 429 deflection_limit_reached with Retry-After', async () => {
    const res = await api('/answers', { method: 'POST', body: { question: 'over the limit' } });
    assertError(res, 429, 'deflection_limit_reached');
    assert.equal(res.headers.get('retry-after'), '3600');
  });

  it('when a backing service is down, then 503 service_unavailable with Retry-After', async () => {
    const { key: k } = await orgWithKey(down);
    for (const [method, path, body] of [
      ['GET', '/kb/search?query=x', undefined],
      ['GET', '/faq', undefined],
      ['GET', '/tickets', undefined],
      ['POST', '/tickets', { content: 'x' }],
      ['POST', '/answers', { question: 'x' }],
    ] as const) {
      const res = await request(`${down.base}/api/agent${path}`, { method, key: k, body });
      assertError(res, 503, 'service_unavailable');
      assert.ok(Number(res.headers.get('retry-after')) >= 1);
    }
  });
});

describe('batched upstream calls', () => {
  it('when searches arrive together, then they leave in one SearchBatch and each gets its own hits, request id and error', async () => {
    // Searches that reach the gateway in one turn of its event loop are batched; 12 sent at
    // once are seen together within a few tries (their rate-limit replies share a Redis read).
    for (let attempt = 0; attempt < 10 && upstreams.calls.searchBatch.length === 0; attempt++) {
      upstreams.reset();
      const ids = Array.from({ length: 12 }, (_, i) => `batched-${attempt}-${i}`);
      const responses = await Promise.all(
        ids.map((id, i) => {
          const query = i === 5 ? encodeURIComponent(UNAVAILABLE_QUERY) : `q${i}`;
          return api(`/kb/search?query=${query}&limit=${(i % 2) + 1}`, {
            headers: { 'x-request-id': id },
          });
        }),
      );
      responses.forEach((res, i) => {
        assert.equal(res.headers.get('x-request-id'), ids[i]);
        if (i === 5) {
          assertError(res, 503, 'service_unavailable');
          assert.equal(res.headers.get('retry-after'), '3');
        } else {
          assert.equal(res.status, 200, res.text);
          assert.equal(res.json.results.length, (i % 2) + 1, `search ${i}`);
        }
      });
      // Each search reached knowledge, with its own request id (the one answered UNAVAILABLE
      // may have been sent again by the channel's retry policy, read-only calls being
      // retryable: hence the sets).
      assert.deepEqual(
        [...new Set(upstreams.calls.search.map((s) => s.query))].sort(),
        [...ids.map((_, i) => (i === 5 ? UNAVAILABLE_QUERY : `q${i}`))].sort(),
      );
      assert.deepEqual([...new Set(upstreams.requestIds)].sort(), [...ids].sort());
    }
    assert.ok(upstreams.calls.searchBatch.length > 0, 'no SearchBatch call in 10 tries');
    assert.ok(upstreams.calls.searchBatch.every((b) => b.searches.length >= 2));
  });

  it('when creates arrive together, then they leave in one CreateTicketBatch and each gets its own ticket, request id and error', async () => {
    for (
      let attempt = 0;
      attempt < 10 && upstreams.calls.createTicketBatch.length === 0;
      attempt++
    ) {
      upstreams.reset();
      const ids = Array.from({ length: 12 }, (_, i) => `create-${attempt}-${i}`);
      const key = `batched-key-${attempt}`;
      // 3 and 7 share an idempotency key: one ticket, the later a duplicate of it.
      const bodies = ids.map((_, i) => ({
        content: i === 5 ? REJECTED_CONTENT : `ticket ${i}`,
        ...(i === 3 || i === 7 ? { idempotencyKey: key } : {}),
      }));
      const responses = await Promise.all(
        ids.map((id, i) =>
          api('/tickets', { method: 'POST', body: bodies[i], headers: { 'x-request-id': id } }),
        ),
      );
      responses.forEach((res, i) => {
        assert.equal(res.headers.get('x-request-id'), ids[i]);
        if (i === 5) assertError(res, 400, 'invalid_request', 'content');
        else assert.equal(res.status, 201, res.text);
      });
      const created = responses.filter((_, i) => i !== 5).map((r) => r.json.ticket_id);
      assert.equal(new Set(created).size, 10, 'one ticket per create, the repeated key once');
      assert.equal(responses[3]!.json.ticket_id === responses[7]!.json.ticket_id, true);
      assert.deepEqual([responses[3]!.json.duplicate, responses[7]!.json.duplicate].sort(), [
        false,
        true,
      ]);
      assert.deepEqual(
        upstreams.calls.createTicket.map((c) => c.content).sort(),
        bodies.map((b) => b.content).sort(),
      );
      assert.deepEqual([...upstreams.requestIds].sort(), [...ids].sort());
    }
    assert.ok(
      upstreams.calls.createTicketBatch.length > 0,
      'no CreateTicketBatch call in 10 tries',
    );
    assert.ok(upstreams.calls.createTicketBatch.every((b) => b.tickets.length >= 2));
  });
});

describe('probes and metadata', () => {
  it('when /healthz is asked, then 200 {status: ok}', async () => {
    const res = await request(`${gw.base}/healthz`);
    assert.equal(res.status, 200);
    assert.deepEqual(res.json, { status: 'ok' });
  });

  it('when every dependency answers, then /readyz is 200; when tickets is down, then 503 naming nothing', async () => {
    const ok = await request(`${gw.base}/readyz`);
    assert.equal(ok.status, 200, ok.text);
    assert.deepEqual(ok.json, { status: 'ready' });
    const bad = await request(`${down.base}/readyz`);
    assert.equal(bad.status, 503);
    assert.equal(bad.headers.get('retry-after'), '1');
    assert.deepEqual(bad.json, {
      status: 'not_ready',
      error: { message: 'not ready', code: 'service_unavailable' },
    });
    // No address, no dependency name, no upstream error text on the public listener.
    assert.doesNotMatch(bad.text, /127\.0\.0\.1|tickets|store|redis|serving/);
  });

  it('when the admin asks /admin/v1/readyz, then the checks and their reasons are shown, behind the admin token', async () => {
    const ok = await admin(gw, 'GET', '/readyz');
    assert.equal(ok.status, 200, ok.text);
    assert.deepEqual(ok.json, {
      status: 'ready',
      checks: { store: 'ok', redis: 'ok', tickets: 'ok' },
    });
    const bad = await admin(down, 'GET', '/readyz');
    assert.equal(bad.status, 503);
    assert.equal(bad.json.status, 'not_ready');
    assert.equal(bad.json.checks.store, 'ok');
    assert.match(bad.json.checks.tickets, /^failed: tickets service at 127\.0\.0\.1:1 /);
    assert.equal(bad.json.error.code, 'service_unavailable');
    const anonymous = await request(`${down.adminBase}/admin/v1/readyz`);
    assert.equal(anonymous.status, 401);
    assert.doesNotMatch(anonymous.text, /127\.0\.0\.1/);
    // Each check run sets the per-dependency gauge.
    const gauge = await metricsRegistry.getSingleMetricAsString('gateway_dependency_up');
    assert.match(gauge, /^gateway_dependency_up\{dependency="tickets"\} [01]$/m);
    assert.match(gauge, /^gateway_dependency_up\{dependency="store"\} 1$/m);
    await request(`${down.base}/readyz`);
    assert.match(
      await metricsRegistry.getSingleMetricAsString('gateway_dependency_up'),
      /^gateway_dependency_up\{dependency="tickets"\} 0$/m,
    );
    await request(`${gw.base}/readyz`);
    assert.match(
      await metricsRegistry.getSingleMetricAsString('gateway_dependency_up'),
      /^gateway_dependency_up\{dependency="tickets"\} 1$/m,
    );
  });

  it('when the protected-resource metadata is fetched, then it follows RFC 9728 with the scope catalogue', async () => {
    // RFC 9728 §3.3: `resource` is the identifier the metadata URL was derived from, i.e. the
    // well-known suffix inserted between host and path.
    for (const [path, resource] of [
      ['', TEST_BASE_URL],
      ['/api/v1/agent', `${TEST_BASE_URL}/api/v1/agent`],
      ['/api/agent', `${TEST_BASE_URL}/api/agent`],
      ['/api/mcp', `${TEST_BASE_URL}/api/mcp`],
    ]) {
      const res = await request(`${gw.base}/.well-known/oauth-protected-resource${path}`);
      assert.equal(res.status, 200);
      assert.match(res.headers.get('content-type') ?? '', /^application\/json\b/);
      assert.deepEqual(Object.keys(res.json).sort(), [
        'bearer_methods_supported',
        'resource',
        'resource_documentation',
        'resource_name',
        'scopes_supported',
        'x-api-scopes',
        'x-authentication',
      ]);
      assert.equal(res.json.resource, resource);
      assert.deepEqual(res.json.scopes_supported, [
        'kb:read',
        'faq:read',
        'tickets:read',
        'tickets:write',
        'answers:write',
      ]);
      assert.deepEqual(res.json.bearer_methods_supported, ['header']);
      assert.equal(res.json.resource_documentation, `${TEST_BASE_URL}/docs`);
      assert.equal(typeof res.json.resource_name, 'string');
      assert.deepEqual(Object.keys(res.json['x-api-scopes']), res.json.scopes_supported);
      for (const scope of res.json.scopes_supported) {
        assert.equal(typeof res.json['x-api-scopes'][scope].description, 'string');
        assert.ok(res.json['x-api-scopes'][scope].operations.length > 0);
      }
    }
    const post = await request(`${gw.base}/.well-known/oauth-protected-resource/api/mcp`, {
      method: 'POST',
    });
    assertError(post, 405, 'method_not_allowed');
    assert.equal(post.headers.get('allow'), 'GET, HEAD');
  });

  it('when the admin API is asked on the public port, then 404', async () => {
    const res = await request(`${gw.base}/admin/v1/orgs`, {
      headers: { authorization: `Bearer ${gw.handle.adminToken}` },
    });
    assertError(res, 404, 'not_found');
  });
});
