// Hardening (issue 9.5), checked from the outside:
// - no X-Powered-By and X-Content-Type-Options: nosniff on every response (public API, MCP,
//   admin API, and the raw answers to requests Node refuses before express);
// - CORS off by default: no Access-Control-* header on any response, preflights not granted;
// - only key hashes stored: no plain key (nor its secret part) anywhere in MySQL, nor in the
//   embedded store's files;
// - failed authentication is throttled per client IP (N bad keys → 429) while a valid key
//   still works;
// - secrets never reach the logs: keys (valid, revoked, mistyped, in a URL by mistake) and the
//   admin token are absent from every captured log line.
import { test, before, after, describe } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { rawExchange } from '../support/http-raw.js';
import { INITIALIZE, MCP_HEADERS, toolCall } from '../support/mcp.js';
import { queryRows } from '../support/pipeline.js';
import { leakedSecrets, secretPart } from '../support/secrets.js';
import { badChecksumKey, redisDatabase } from '../support/security.js';
import { ALL_SCOPES, Stack, api } from '../support/stack.js';

const ORG = 'hard';
const EVIL_ORIGIN = 'https://evil.example';
const AUTH_FAILURES = 5;

let dir: string;
let stack: Stack; // MySQL, Redis, NATS
let embedded: Stack; // embedded store, low failed-auth budget
let key: string;
let revokedKey: string;
const secrets: string[] = [];

before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'hardening-'));
  stack = await Stack.onTestBackends('sec-hard', {
    redisUrl: redisDatabase(8),
    env: { DIGEST_SCHEDULER_ENABLED: 'false', DIGEST_METRICS_PORT: '0' },
  });
  embedded = await new Stack({
    dir: join(dir, 'embedded'),
    services: ['tickets', 'knowledge'],
    env: {
      AUTH_FAILURES_PER_MIN_PER_IP: String(AUTH_FAILURES),
      DIGEST_SCHEDULER_ENABLED: 'false',
    },
  }).start();
  key = await stack.orgWithKey(ORG);
  const revoked = await stack.createKey(ORG, ['kb:read']);
  await stack.admin('DELETE', `/admin/v1/orgs/${ORG}/keys/${revoked.id}`);
  revokedKey = revoked.key;
  secrets.push(key, revokedKey, stack.adminToken, embedded.adminToken);
  await stack.admin('POST', `/admin/v1/orgs/${ORG}/kb/entries`, [
    { id: 'pw', question: 'How do I reset my password?', answer: 'Settings > Security > Reset.' },
  ]);
});

after(async () => {
  await stack?.stop();
  await embedded?.stop();
  if (dir && process.env.KEEP_TEST_TMP !== '1') rmSync(dir, { recursive: true, force: true });
});

let checks = 0;

/** One request of every kind the gateway answers, each with a browser Origin. */
function requestsOfEveryKind(): Array<[string, () => ReturnType<typeof api>]> {
  const base = stack.baseUrl();
  const admin = stack.adminUrl();
  const o = { origin: EVIL_ORIGIN };
  const withKey = (k: string) => ({ key: k, headers: o });
  const adminAuth = { authorization: `Bearer ${stack.adminToken}`, ...o };
  return [
    ['healthz', () => api(base, 'GET', '/healthz', { headers: o })],
    ['readyz', () => api(base, 'GET', '/readyz', { headers: o })],
    ['openapi', () => api(base, 'GET', '/api/v1/agent/openapi.json', { headers: o })],
    ['docs', () => api(base, 'GET', '/docs', { headers: o })],
    ['well-known', () => api(base, 'GET', '/.well-known/oauth-protected-resource', { headers: o })],
    ['search 200', () => api(base, 'GET', '/api/v1/agent/kb/search?query=password', withKey(key))],
    ['faq 200', () => api(base, 'GET', '/api/agent/faq', withKey(key))],
    ['list 200', () => api(base, 'GET', '/api/v1/agent/tickets', withKey(key))],
    [
      'create 201',
      () =>
        api(base, 'POST', '/api/v1/agent/tickets', { ...withKey(key), body: { content: 'hdr' } }),
    ],
    [
      'answer 200',
      () =>
        api(base, 'POST', '/api/v1/agent/answers', {
          ...withKey(key),
          body: { question: 'How do I reset my password?' },
        }),
    ],
    ['401 no key', () => api(base, 'GET', '/api/v1/agent/tickets', { headers: o })],
    ['401 revoked', () => api(base, 'GET', '/api/v1/agent/tickets', withKey(revokedKey))],
    ['400', () => api(base, 'GET', '/api/v1/agent/tickets?limit=0', withKey(key))],
    ['404', () => api(base, 'GET', '/api/v1/agent/nope', withKey(key))],
    ['405', () => api(base, 'DELETE', '/api/v1/agent/tickets', withKey(key))],
    [
      '413',
      () =>
        api(base, 'POST', '/api/v1/agent/tickets', {
          ...withKey(key),
          body: { content: 'x', pad: 'p'.repeat(70_000) },
        }),
    ],
    [
      'mcp initialize',
      () =>
        api(base, 'POST', '/api/mcp', {
          key,
          body: INITIALIZE,
          headers: { ...MCP_HEADERS },
        }),
    ],
    [
      'mcp tool',
      () =>
        api(base, 'POST', '/api/mcp', {
          key,
          body: toolCall('search_knowledge_base', { query: 'password' }),
          headers: { ...MCP_HEADERS },
        }),
    ],
    [
      'mcp foreign origin 403',
      () =>
        api(base, 'POST', '/api/mcp', { key, body: INITIALIZE, headers: { ...MCP_HEADERS, ...o } }),
    ],
    ['mcp GET 405', () => api(base, 'GET', '/api/mcp', withKey(key))],
    ['admin orgs', () => api(admin, 'GET', '/admin/v1/orgs', { headers: adminAuth })],
    ['admin usage', () => api(admin, 'GET', `/admin/v1/orgs/${ORG}/usage`, { headers: adminAuth })],
    ['admin 401', () => api(admin, 'GET', '/admin/v1/orgs', { headers: o })],
    ['admin 404', () => api(admin, 'GET', '/admin/v1/nope', { headers: adminAuth })],
  ];
}

const CORS_HEADERS = [
  'access-control-allow-origin',
  'access-control-allow-credentials',
  'access-control-allow-methods',
  'access-control-allow-headers',
  'access-control-expose-headers',
  'access-control-max-age',
];

function assertHardenedHeaders(name: string, headers: Headers): void {
  checks++;
  assert.equal(headers.get('x-powered-by'), null, `${name}: X-Powered-By`);
  assert.equal(headers.get('x-content-type-options'), 'nosniff', `${name}: nosniff`);
  for (const h of CORS_HEADERS) assert.equal(headers.get(h), null, `${name}: ${h}`);
}

describe('response headers', () => {
  test('when any endpoint answers (success or error, public, MCP or admin), then nosniff, no X-Powered-By and no CORS grant', async () => {
    for (const [name, send] of requestsOfEveryKind()) {
      const res = await send();
      assert.ok(res.status < 500, `${name}: ${res.status} ${res.text.slice(0, 200)}`);
      assertHardenedHeaders(name, res.headers);
    }
  });

  test('when Node itself refuses a request (malformed, headers too large, no Host), then the raw answer is JSON with nosniff too', async () => {
    const port = Number(new URL(stack.baseUrl()).port);
    const requests = [
      'GARBAGE\r\n\r\n',
      `GET /api/v1/agent/faq HTTP/1.1\r\nHost: x\r\nX-Big: ${'b'.repeat(70 * 1024)}\r\n\r\n`,
      'GET /api/v1/agent/faq HTTP/1.1\r\nAuthorization: Bearer x\r\n\r\n',
      'CONNECT 127.0.0.1:1 HTTP/1.1\r\nHost: 127.0.0.1:1\r\n\r\n',
    ];
    for (const raw of requests) {
      const r = await rawExchange(port, [raw], { timeoutMs: 5_000, untilResponse: true });
      const name = raw.slice(0, 30);
      assert.ok(r.response, `${name}: no response`);
      assert.ok(r.response.status >= 400 && r.response.status < 500, name);
      assert.match(r.response.headers['content-type'] ?? '', /^application\/json/, name);
      assert.equal(r.response.headers['x-content-type-options'], 'nosniff', name);
      assert.equal(r.response.headers['x-powered-by'], undefined, name);
      assert.ok(r.response.json?.error?.code, name);
      checks++;
    }
  });

  test('when a browser sends a CORS preflight, then it is not granted on any route', async () => {
    const paths = [
      '/api/v1/agent/tickets',
      '/api/agent/kb/search',
      '/api/v1/agent/answers',
      '/api/v1/agent/faq',
      '/api/mcp',
      '/healthz',
      '/nope',
    ];
    for (const path of paths) {
      const res = await api(stack.baseUrl(), 'OPTIONS', path, {
        headers: {
          origin: EVIL_ORIGIN,
          'access-control-request-method': 'POST',
          'access-control-request-headers': 'authorization, content-type',
        },
      });
      assert.ok(res.status >= 400 && res.status < 500, `${path}: ${res.status}`);
      assert.equal(res.json?.error?.code !== undefined, true, `${path}: JSON error`);
      assertHardenedHeaders(`OPTIONS ${path}`, res.headers);
    }
  });
});

describe('key storage', () => {
  test('when keys are created, then MySQL holds only their SHA-256 hashes and display prefixes, no plain key anywhere', async () => {
    const created = [key, revokedKey];
    for (let i = 0; i < 3; i++) created.push(await stack.keyFor(ORG, ALL_SCOPES));
    secrets.push(...created);
    const rows = await queryRows<{ key_hash: string; prefix: string }>(
      stack.mysqlUrl,
      'SELECT key_hash, prefix FROM gateway_api_keys WHERE org_id = ?',
      [ORG],
    );
    const hashes = new Set(rows.map((r) => r.key_hash));
    for (const k of created) {
      assert.ok(hashes.has(createHash('sha256').update(k).digest('hex')), 'hash stored');
    }
    for (const r of rows) assert.equal(r.prefix.length, 12);
    // Every column of every table of the database, as text.
    const tables = await queryRows<{ t: string }>(
      stack.mysqlUrl,
      'SELECT table_name AS t FROM information_schema.tables WHERE table_schema = DATABASE()',
    );
    let dump = '';
    for (const { t } of tables) {
      const content = await queryRows<Record<string, unknown>>(
        stack.mysqlUrl,
        `SELECT * FROM \`${t}\``,
      );
      dump += JSON.stringify(content, (_k, v: unknown) =>
        Buffer.isBuffer(v) ? v.toString('latin1') : v,
      );
    }
    assert.ok(dump.length > 1000, 'the dump has the data');
    assert.deepEqual(leakedSecrets(dump, created), [], 'plain keys in MySQL');
    checks += created.length;
  });

  test('when keys are created on the embedded store, then no file under DATA_DIR holds a plain key', async () => {
    await embedded.admin('POST', '/admin/v1/orgs', { id: ORG, name: 'Embedded' });
    const created: string[] = [];
    for (let i = 0; i < 3; i++) created.push(await embedded.keyFor(ORG, ALL_SCOPES));
    const revoke = await embedded.createKey(ORG, ['kb:read']);
    await embedded.admin('DELETE', `/admin/v1/orgs/${ORG}/keys/${revoke.id}`);
    created.push(revoke.key);
    secrets.push(...created);
    const res = await api(embedded.baseUrl(), 'GET', '/api/v1/agent/tickets', { key: created[0] });
    assert.equal(res.status, 200, 'the embedded keys work');
    const files = walk(join(dir, 'embedded', 'data'));
    assert.ok(
      files.some((f) => f.endsWith('store.jsonl')),
      `store journal among ${files}`,
    );
    for (const f of files) {
      const text = readFileSync(f).toString('latin1');
      assert.deepEqual(leakedSecrets(text, created), [], `plain key in ${f}`);
      checks++;
    }
    const journal = readFileSync(
      files.find((f) => f.endsWith('store.jsonl'))!,
      'utf8',
    );
    for (const k of created) {
      assert.ok(journal.includes(createHash('sha256').update(k).digest('hex')), 'hash journaled');
      assert.ok(!journal.includes(secretPart(k)));
    }
  });
});

function walk(d: string): string[] {
  return readdirSync(d).flatMap((name) => {
    const p = join(d, name);
    return statSync(p).isDirectory() ? walk(p) : [p];
  });
}

describe('failed authentication', () => {
  test(`when one IP sends ${AUTH_FAILURES + 1} bad keys, then the last is 429 with Retry-After, and a valid key from that IP still works`, async () => {
    const base = embedded.baseUrl();
    await embedded.admin('POST', '/admin/v1/orgs', { id: 'throttle', name: 'Throttle' });
    const valid = await embedded.keyFor('throttle', ALL_SCOPES);
    secrets.push(valid);
    const bad = [
      'sak_live_nope',
      badChecksumKey(valid),
      'not-a-key',
      `${valid}x`,
      'sak_live_' + 'A'.repeat(38),
    ];
    for (const [i, k] of bad.entries()) {
      const res = await api(base, 'GET', '/api/v1/agent/tickets', { key: k });
      assert.equal(res.status, 401, `bad key ${i + 1}: ${res.text}`);
    }
    const blocked = await api(base, 'GET', '/api/v1/agent/tickets', { key: 'sak_live_again' });
    assert.equal(blocked.status, 429, blocked.text);
    assert.equal(blocked.json.error.code, 'rate_limited');
    assert.ok(Number(blocked.headers.get('retry-after')) >= 1);
    // The block covers MCP too, and requests without any key.
    const mcp = await api(base, 'POST', '/api/mcp', {
      key: 'sak_live_again',
      body: INITIALIZE,
      headers: MCP_HEADERS,
    });
    assert.equal(mcp.status, 429, mcp.text);
    assert.equal((await api(base, 'GET', '/api/v1/agent/faq')).status, 429);
    // A valid key is never locked out by someone else's failures from the same address.
    const ok = await api(base, 'GET', '/api/v1/agent/tickets', { key: valid });
    assert.equal(ok.status, 200, ok.text);
    const okMcp = await api(base, 'POST', '/api/mcp', {
      key: valid,
      body: INITIALIZE,
      headers: MCP_HEADERS,
    });
    assert.equal(okMcp.status, 200, okMcp.text);
    checks += bad.length + 5;
  });
});

describe('logs', () => {
  test('when keys travel in headers, in URLs by mistake and in error paths, then no key and no admin token appears in any log', async () => {
    const base = stack.baseUrl();
    const urlKey = await stack.keyFor(ORG, ['kb:read']);
    secrets.push(urlKey);
    // Keys where they belong, where they do not, and mistyped.
    await api(base, 'GET', `/api/v1/agent/kb/search?query=password&api_key=${urlKey}`, { key });
    await api(base, 'GET', `/api/v1/agent/kb/search?query=${urlKey}`, { key });
    await api(base, 'GET', `/api/v1/agent/${urlKey}`, { key });
    await api(base, 'GET', '/api/v1/agent/tickets', { key: badChecksumKey(urlKey) });
    await api(base, 'GET', '/api/v1/agent/tickets', { key: revokedKey });
    await api(base, 'GET', '/api/v1/agent/tickets', { headers: { authorization: urlKey } });
    await api(stack.adminUrl(), 'GET', '/admin/v1/orgs', {
      headers: { authorization: `Bearer ${stack.adminToken}x` },
    });
    await api(base, 'POST', '/api/mcp', {
      key,
      body: toolCall('search_knowledge_base', { query: urlKey }),
      headers: MCP_HEADERS,
    });
    // Give the log streams a moment to flush.
    await new Promise((r) => setTimeout(r, 300));
    const logs = stack.allLogs() + embedded.allLogs();
    assert.ok(logs.length > 1000, 'logs were captured');
    assert.deepEqual(leakedSecrets(logs, [...secrets, badChecksumKey(urlKey)]), []);
    checks += secrets.length + 1;
    console.log(`hardening checks: ${checks}`);
  });
});
