// Conformance: every operation and every documented error path, called through the gateway with
// real services (tickets, knowledge, answers, and digest when it is built) on real MariaDB,
// Redis and NATS, and each response (status, documented headers, body) checked against the
// OpenAPI document. Any undocumented status, header or body field fails; at the end every
// documented (operation, status, error code) must have been seen.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import createClient, { type Middleware } from 'openapi-fetch';
import type { paths } from '@support-agent/gateway/openapi';
import { SHORT_KB } from '../support/kb.js';
import { OPENAPI_FILE, OpenApiContract } from '../support/openapi-contract.js';
import { redisDatabase } from '../support/security.js';
import { ALL_SCOPES, Stack, api } from '../support/stack.js';

const ROOT = resolve(new URL('../..', import.meta.url).pathname);
const DIGEST_BUILT = existsSync(join(ROOT, 'services/digest/dist/main.js'));
const PREFIXES = ['/api/v1/agent', '/api/agent'] as const;

let stack: Stack;
let contract: OpenApiContract;
let key: string; // every scope, organization ct-main

const KB = SHORT_KB;
/** A question the KB answers word for word: a high-confidence answer. */
const COVERED = 'How do I export tickets to CSV?';

/** Every operation, with a valid request. */
const OPS = [
  { id: 'searchKnowledgeBase', method: 'GET', path: '/kb/search?query=password', scope: 'kb:read' },
  { id: 'getFaqDigest', method: 'GET', path: '/faq', scope: 'faq:read' },
  { id: 'listTickets', method: 'GET', path: '/tickets', scope: 'tickets:read' },
  {
    id: 'createTicket',
    method: 'POST',
    path: '/tickets',
    scope: 'tickets:write',
    body: { content: 'The export button does nothing' },
  },
  {
    id: 'generateAnswer',
    method: 'POST',
    path: '/answers',
    scope: 'answers:write',
    body: { question: COVERED },
  },
] as const;

type CallOptions = Parameters<typeof api>[3];

/** Calls the gateway and asserts the response conforms to the document. */
async function call(method: string, path: string, options: CallOptions = {}) {
  const res = await api(stack.baseUrl(), method, path, options);
  const url = `${stack.baseUrl()}${path}`;
  assert.deepEqual(contract.check(method, url, res), [], `${method} ${path}: ${res.text}`);
  return res;
}

async function expectError(
  status: number,
  code: string,
  method: string,
  path: string,
  options: CallOptions = {},
  param?: string,
) {
  const res = await call(method, path, options);
  assert.equal(res.status, status, `${method} ${path}: ${res.text}`);
  assert.equal(res.json.error.code, code, res.text);
  if (param !== undefined) assert.equal(res.json.error.param, param, res.text);
  return res;
}

function mondayOfThisWeek(): string {
  const d = new Date();
  d.setUTCDate(d.getUTCDate() - ((d.getUTCDay() + 6) % 7));
  return d.toISOString().slice(0, 10);
}

before(async () => {
  contract = OpenApiContract.fromFile();
  stack = await Stack.onTestBackends('e2e-contract', {
    services: ['tickets', 'knowledge', 'answers', ...(DIGEST_BUILT ? ['digest'] : [])],
    redisUrl: redisDatabase(3),
    env: {
      // This suite sends many bad keys on purpose from one IP.
      AUTH_FAILURES_PER_MIN_PER_IP: '1000',
      DIGEST_METRICS_PORT: '0',
      DIGEST_SCHEDULER_ENABLED: 'false',
    },
  });
  key = await stack.orgWithKey('ct-main');
  await stack.admin('POST', '/admin/v1/orgs/ct-main/kb/entries', KB);
});

after(() => stack?.stop());

test('when the document is fetched without a key, then both prefixes serve the repository file with servers = / and PUBLIC_BASE_URL', async () => {
  const file = JSON.parse(readFileSync(OPENAPI_FILE, 'utf8'));
  const bodies: string[] = [];
  for (const prefix of PREFIXES) {
    const res = await call('GET', `${prefix}/openapi.json`);
    assert.equal(res.status, 200);
    assert.equal(res.headers.get('ratelimit'), null, 'no key, no rate limit');
    assert.deepEqual(
      res.json.servers.map((s: { url: string }) => s.url),
      ['/', stack.baseUrl()],
      'first relative to the document (any address works), then PUBLIC_BASE_URL',
    );
    assert.deepEqual({ ...res.json, servers: file.servers }, file);
    assert.equal(res.json.info.version, '1.0.0');
    bodies.push(res.text);
  }
  assert.equal(bodies[0], bodies[1]);
});

test('when every operation is called with the typed client (openapi-fetch) on both prefixes, then each success conforms', async () => {
  const violations: string[] = [];
  const checker: Middleware = {
    async onResponse({ request, response }) {
      const text = await response.clone().text();
      violations.push(
        ...contract.check(request.method, request.url, {
          status: response.status,
          headers: response.headers,
          text,
        }),
      );
    },
  };
  const client = createClient<paths>({
    baseUrl: stack.baseUrl(),
    headers: { authorization: `Bearer ${key}` },
  });
  client.use(checker);

  const search = await client.GET('/api/v1/agent/kb/search', {
    params: {
      query: { query: 'I forgot my password', limit: 3 },
      header: { 'X-Request-Id': 'ct-1' },
    },
  });
  assert.equal(search.response.status, 200);
  assert.equal(search.response.headers.get('x-request-id'), 'ct-1');
  assert.equal(search.data?.results[0]?.question, 'How do I reset my password?');
  const plain = await client.GET('/api/agent/kb/search', {
    params: { query: { query: 'I forgot my password', limit: 3 } },
  });
  assert.deepEqual(plain.data, search.data, 'both prefixes answer the same');

  const idempotencyKey = `ct-${Date.now()}`;
  for (const prefix of PREFIXES) {
    const created = await client.POST(`${prefix}/tickets`, {
      params: { header: { 'Idempotency-Key': idempotencyKey } },
      body: { content: `My CSV export times out (${prefix})`, authorName: 'ana' },
    });
    assert.equal(created.response.status, 201);
    assert.equal(created.data?.duplicate, prefix !== PREFIXES[0], 'the second call is a replay');
  }
  await client.POST('/api/v1/agent/tickets', { body: { content: 'A second ticket' } });

  for (const prefix of PREFIXES) {
    const first = await client.GET(`${prefix}/tickets`, { params: { query: { limit: 1 } } });
    assert.equal(first.response.status, 200);
    assert.equal(first.data?.tickets.length, 1);
    assert.equal(typeof first.data?.next_cursor, 'string');
    const next = await client.GET(`${prefix}/tickets`, {
      params: { query: { limit: 20, cursor: first.data!.next_cursor! } },
    });
    assert.equal(next.response.status, 200);
    assert.equal(next.data?.next_cursor, null);

    const answer = await client.POST(`${prefix}/answers`, { body: { question: COVERED } });
    assert.equal(answer.response.status, 200);
    assert.equal(answer.data?.sources?.[0]?.question, COVERED);

    const faq = await client.GET(`${prefix}/faq`);
    assert.equal(faq.response.status, DIGEST_BUILT ? 200 : 503);
  }
  assert.deepEqual(violations, []);
});

test(
  'when a digest has been built, then the FAQ digest body conforms too',
  { skip: !DIGEST_BUILT },
  async () => {
    await stack.admin('POST', '/admin/v1/orgs/ct-main/digests', { week_start: mondayOfThisWeek() });
    const res = await call('GET', '/api/v1/agent/faq', { key });
    assert.equal(res.status, 200);
    assert.equal(res.json.week_start, mondayOfThisWeek());
    assert.equal(typeof res.json.content, 'string');
  },
);

test('when inputs are at their limits (counted in code points), then they are accepted', async () => {
  const q = await call(
    'GET',
    `/api/v1/agent/kb/search?query=${encodeURIComponent('😀'.repeat(2000))}&limit=20`,
    { key },
  );
  assert.equal(q.status, 200);
  const t = await call('POST', '/api/v1/agent/tickets', {
    key,
    body: {
      content: '😀'.repeat(4000),
      authorName: 'é'.repeat(200),
      idempotencyKey: 'k'.repeat(200),
    },
  });
  assert.equal(t.status, 201);
  const a = await call('POST', '/api/agent/answers', {
    key,
    body: { question: '😀'.repeat(2000) },
  });
  assert.equal(a.status, 200);
});

test('when parameters or bodies are invalid, then 400 invalid_request naming them (every operation with inputs)', async () => {
  const search = '/api/v1/agent/kb/search';
  await expectError(400, 'invalid_request', 'GET', search, { key }, 'query');
  await expectError(400, 'invalid_request', 'GET', `${search}?query=%20%20`, { key }, 'query');
  const long = encodeURIComponent('é'.repeat(2001));
  await expectError(400, 'invalid_request', 'GET', `${search}?query=${long}`, { key }, 'query');
  for (const limit of ['0', '21', 'abc', '1.5']) {
    await expectError(
      400,
      'invalid_request',
      'GET',
      `${search}?query=x&limit=${limit}`,
      { key },
      'limit',
    );
  }
  await expectError(
    400,
    'invalid_request',
    'GET',
    `${search}?query=x&limit=1&limit=2`,
    { key },
    'limit',
  );

  const tickets = '/api/agent/tickets';
  await expectError(400, 'invalid_request', 'GET', `${tickets}?status=pending`, { key }, 'status');
  await expectError(
    400,
    'invalid_request',
    'GET',
    `${tickets}?priority=urgent`,
    { key },
    'priority',
  );
  await expectError(
    400,
    'invalid_request',
    'GET',
    `${tickets}?category=other%21`,
    { key },
    'category',
  );
  await expectError(400, 'invalid_request', 'GET', `${tickets}?limit=21`, { key }, 'limit');

  await expectError(400, 'invalid_request', 'POST', tickets, { key, body: {} }, 'content');
  await expectError(
    400,
    'invalid_request',
    'POST',
    tickets,
    { key, body: { content: 'x'.repeat(4001) } },
    'content',
  );
  await expectError(
    400,
    'invalid_request',
    'POST',
    tickets,
    { key, body: { content: 'x', authorName: 'a'.repeat(201) } },
    'authorName',
  );
  await expectError(
    400,
    'invalid_request',
    'POST',
    tickets,
    { key, body: { content: 'x', idempotencyKey: 'k'.repeat(201) } },
    'idempotencyKey',
  );
  await expectError(
    400,
    'invalid_request',
    'POST',
    tickets,
    { key, body: { content: 'x' }, headers: { 'idempotency-key': 'k'.repeat(201) } },
    'Idempotency-Key',
  );
  await expectError(400, 'invalid_request', 'POST', tickets, {
    key,
    rawBody: '{"content":',
    headers: { 'content-type': 'application/json' },
  });
  await expectError(400, 'invalid_request', 'POST', tickets, {
    key,
    rawBody: '["x"]',
    headers: { 'content-type': 'application/json' },
  });
  await expectError(
    400,
    'invalid_request',
    'POST',
    tickets,
    { key, rawBody: 'content=x', headers: { 'content-type': 'application/x-www-form-urlencoded' } },
    'Content-Type',
  );

  const answers = '/api/v1/agent/answers';
  for (const body of [
    {},
    { question: '' },
    { question: ' \n ' },
    { question: 42 },
    { question: 'q'.repeat(2001) },
  ]) {
    await expectError(400, 'invalid_request', 'POST', answers, { key, body }, 'question');
  }
});

test('when a cursor was not produced by the service, then 400 invalid_cursor', async () => {
  for (const cursor of ['forged', 'eyJpZCI6MX0', 'c'.repeat(1025)]) {
    await expectError(
      400,
      'invalid_cursor',
      'GET',
      `/api/v1/agent/tickets?cursor=${cursor}`,
      { key },
      'cursor',
    );
  }
});

test('when the key is missing, of another scheme, malformed or revoked, then 401 on every operation', async () => {
  const revoked = await stack.createKey('ct-main', ALL_SCOPES);
  await stack.admin('DELETE', `/admin/v1/orgs/ct-main/keys/${revoked.id}`);
  const variants: Array<Record<string, string>> = [
    {},
    { authorization: 'Basic dXNlcjpwYXNz' },
    { authorization: 'Bearer sak_live_not-a-key' },
    { authorization: `Bearer ${revoked.key}` },
  ];
  for (const op of OPS) {
    for (const headers of variants) {
      const body = 'body' in op ? op.body : undefined;
      const res = await expectError(401, 'unauthorized', op.method, `/api/v1/agent${op.path}`, {
        headers,
        body,
      });
      const challenge = res.headers.get('www-authenticate') ?? '';
      assert.match(challenge, /resource_metadata="[^"]+\/\.well-known\/oauth-protected-resource"/);
      assert.equal(
        challenge.includes('error="invalid_token"'),
        headers.authorization?.startsWith('Bearer') === true,
      );
    }
  }
});

test('when the key lacks the scope, then 403 insufficient_scope naming it, on every operation', async () => {
  for (const op of OPS) {
    const other = await stack.keyFor(
      'ct-main',
      ALL_SCOPES.filter((s) => s !== op.scope),
    );
    const body = 'body' in op ? op.body : undefined;
    const res = await expectError(403, 'insufficient_scope', op.method, `/api/agent${op.path}`, {
      key: other,
      body,
    });
    assert.equal(res.headers.get('ratelimit'), null, '403 is not counted');
  }
});

test('when the path is unknown, then 404 not_found; when the method is wrong, then 405 with Allow', async () => {
  for (const path of ['/api/v1/agent/nope', '/api/agent/tickets/1', '/api/v2/agent/faq', '/nope']) {
    await expectError(404, 'not_found', 'GET', path, { key });
  }
  const wrong: Array<[string, string, string]> = [
    ['DELETE', '/api/v1/agent/tickets', 'GET, HEAD, POST'],
    ['PUT', '/api/agent/kb/search', 'GET, HEAD'],
    ['POST', '/api/v1/agent/faq', 'GET, HEAD'],
    ['GET', '/api/agent/answers', 'POST'],
    ['POST', '/api/v1/agent/openapi.json', 'GET, HEAD'],
  ];
  for (const [method, path, allow] of wrong) {
    const res = await expectError(405, 'method_not_allowed', method, path, { key });
    assert.equal(res.headers.get('allow'), allow);
  }
});

test('when a body is over 64 KiB, then 413 payload_too_large', async () => {
  const big = JSON.stringify({ content: 'x'.repeat(64 * 1024), question: 'x' });
  for (const path of ['/api/v1/agent/tickets', '/api/agent/answers']) {
    await expectError(413, 'payload_too_large', 'POST', path, {
      key,
      rawBody: big,
      headers: { 'content-type': 'application/json' },
    });
  }
});

test('when the rate limit is used up, then 429 rate_limited with Retry-After and RateLimit headers, on every operation', async () => {
  const limited = await stack.orgWithKey('ct-rate', ALL_SCOPES, { rate_limit_per_key_per_min: 2 });
  const ok = await call('GET', '/api/v1/agent/kb/search?query=x', { key: limited });
  assert.equal(ok.status, 200);
  assert.match(ok.headers.get('ratelimit-policy') ?? '', /^"key";q=2;w=60, "org";q=3000;w=60$/);
  await call('GET', '/api/v1/agent/tickets?limit=abc', { key: limited }); // a 400 counts too
  for (const op of OPS) {
    const body = 'body' in op ? op.body : undefined;
    const res = await expectError(429, 'rate_limited', op.method, `/api/v1/agent${op.path}`, {
      key: limited,
      body,
    });
    assert.ok(Number(res.headers.get('retry-after')) >= 1);
    assert.match(res.headers.get('ratelimit') ?? '', /^"key";r=0;t=\d+$/);
  }
});

test('when the monthly deflection limit is reached, then 429 deflection_limit_reached and nothing is generated', async () => {
  const org = 'ct-deflect';
  const k = await stack.orgWithKey(org, ALL_SCOPES, { deflection_monthly_limit: 1 });
  await stack.admin('POST', `/admin/v1/orgs/${org}/kb/entries`, KB);
  // The KB holds this exact question: the answer is high-confidence and takes the one slot.
  const first = await call('POST', '/api/v1/agent/answers', {
    key: k,
    body: { question: COVERED },
  });
  assert.equal(first.status, 200);
  assert.ok(first.json.confidence >= 75, `confidence ${first.json.confidence}`);
  assert.equal(first.json.high_confidence, true);
  const res = await expectError(429, 'deflection_limit_reached', 'POST', '/api/agent/answers', {
    key: k,
    body: { question: COVERED },
  });
  const nextMonth = new Date();
  nextMonth.setUTCHours(0, 0, 0, 0);
  nextMonth.setUTCMonth(nextMonth.getUTCMonth() + 1, 1);
  const expected = Math.ceil((nextMonth.getTime() - Date.now()) / 1000);
  assert.ok(
    Math.abs(Number(res.headers.get('retry-after')) - expected) <= 60,
    res.headers.get('retry-after') ?? '',
  );
  const usage = await stack.admin<{ deflections_used: number }>(
    'GET',
    `/admin/v1/orgs/${org}/usage`,
  );
  assert.equal(usage.deflections_used, 1);
});

test('when a backing service is down, then 503 service_unavailable with Retry-After, on every operation', async () => {
  // The gateway answers the FAQ of an organization that read it before from its last digest
  // while the digest service is away; an organization it never answered gets the 503.
  const fresh = await stack.orgWithKey('ct-down');
  const faq = () =>
    fetch(`${stack.baseUrl()}/api/v1/agent/faq`, { headers: { authorization: `Bearer ${key}` } });
  const faqBefore = await faq();
  assert.equal(faqBefore.status, DIGEST_BUILT ? 200 : 503);
  const knownFaq = await faqBefore.text();
  await stack.service('knowledge').stop();
  await expectError(503, 'service_unavailable', 'GET', '/api/v1/agent/kb/search?query=password', {
    key,
  });
  if (DIGEST_BUILT) await stack.service('digest').stop();
  await stack.service('answers').stop();
  await stack.service('tickets').stop();
  for (const op of OPS) {
    const body = 'body' in op ? op.body : undefined;
    const res = await expectError(503, 'service_unavailable', op.method, `/api/agent${op.path}`, {
      key: fresh,
      body,
    });
    assert.ok(Number(res.headers.get('retry-after')) >= 1);
  }
  if (DIGEST_BUILT) {
    const faqKnown = await faq();
    assert.equal(faqKnown.status, 200, 'the last digest is served while the digest is away');
    assert.equal(await faqKnown.text(), knownFaq);
  }
});

test('when the suite is done, then every documented status and error code was seen', () => {
  // internal_error is a bug by definition: it cannot be provoked through the public interface.
  // Without a built digest service the FAQ can only be 503.
  const unreachable = (outcome: string) =>
    outcome.endsWith(' 500 internal_error') || (!DIGEST_BUILT && outcome === 'getFaqDigest 200');
  const missing = contract
    .documentedOutcomes()
    .filter((o) => !unreachable(o) && !contract.seen.has(o));
  assert.deepEqual(missing, []);
  const undocumented = [...contract.seen].filter((o) => !contract.documentedOutcomes().includes(o));
  assert.deepEqual(undocumented, []);
});
