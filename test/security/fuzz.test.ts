// Hostile input (issue 9.2): property-based fuzzing (fast-check) of every public endpoint, the
// MCP tools and the admin API through a real stack. Query strings with wrong types, repeats,
// prototype keys, NUL and invalid UTF-8; JSON bodies of every shape (wrong types, prototype
// keys, duplicate keys, deep nesting, sizes around the 64 KiB limit, lone surrogates), raw
// bytes, wrong content types and encodings, overlong and malformed headers, odd methods and
// paths, chunked bodies, slow clients that trickle bytes, malformed JSON-RPC. Every answer must
// be the contract's: a success where a model of the contract says the input is valid,
// otherwise a 4xx JSON error of DESIGN.md §3 — never a 5xx, never HTML, never a hang — and an
// invalid creation writes nothing. Afterwards the processes are healthy and still serve.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { isUtf8 } from 'node:buffer';
import { gzipSync, deflateSync } from 'node:zlib';
import fc from 'fast-check';
import {
  httpRequest,
  rawExchange,
  type Outcome,
  type RawResult,
  type RawStep,
} from '../support/http-raw.js';
import { MCP_HEADERS, MCP_TOOLS, toolCall } from '../support/mcp.js';
import { queryRows } from '../support/pipeline.js';
import { leakedSecrets } from '../support/secrets.js';
import { ERROR_CODES, redisDatabase } from '../support/security.js';
import { ALL_SCOPES, Stack, api } from '../support/stack.js';

const ORG = 'fuzz';
const ADMIN_ORG = 'fuzz-admin';
/** Small server timeouts so slow-client cases end quickly (defaults: 20 s / 30 s). */
const HEADERS_TIMEOUT_MS = 2_000;
const REQUEST_TIMEOUT_MS = 3_000;
const CLIENT_TIMEOUT_MS = 10_000;
const BODY_LIMIT = 64 * 1024;

let stack: Stack;
let key: string;
let base: string;
let port: number;
let cases = 0;
const secrets: string[] = [];

before(async () => {
  stack = await Stack.onTestBackends('sec-fuzz', {
    redisUrl: redisDatabase(7),
    env: {
      AUTH_FAILURES_PER_MIN_PER_IP: '1000000',
      HTTP_HEADERS_TIMEOUT_MS: String(HEADERS_TIMEOUT_MS),
      HTTP_REQUEST_TIMEOUT_MS: String(REQUEST_TIMEOUT_MS),
      DIGEST_SCHEDULER_ENABLED: 'false',
      DIGEST_METRICS_PORT: '0',
      // Logs of 2000 hostile requests are not what this suite looks at.
      LOG_LEVEL: 'warn',
    },
  });
  base = stack.baseUrl();
  port = Number(new URL(base).port);
  const limits = {
    rate_limit_per_key_per_min: 1_000_000,
    rate_limit_per_org_per_min: 1_000_000,
    deflection_monthly_limit: 1_000_000,
  };
  key = await stack.orgWithKey(ORG, ALL_SCOPES, limits);
  secrets.push(key, stack.adminToken, await stack.orgWithKey(ADMIN_ORG, ALL_SCOPES, limits));
  await stack.admin('POST', `/admin/v1/orgs/${ORG}/kb/entries`, [
    { id: 'pw', question: 'How do I reset my password?', answer: 'Settings > Security > Reset.' },
    { id: 'csv', question: 'How do I export tickets to CSV?', answer: 'Tickets > Export > CSV.' },
  ]);
});

after(() => stack?.stop());

// ---------------------------------------------------------------------------------------------
// Checking answers

interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
  json: any;
}

function header(a: Answer, name: string): string | undefined {
  const v = a.headers[name];
  return Array.isArray(v) ? v.join(', ') : v;
}

function fromOutcome(o: Outcome, ctx: string): Answer {
  if (o.kind !== 'response')
    assert.fail(`${ctx}: ${o.kind} after ${o.ms} ms instead of a response`);
  return { status: o.status, headers: o.headers, text: o.text, json: o.json };
}

function fromRaw(r: RawResult, ctx: string): Answer {
  if (!r.response) {
    assert.fail(
      `${ctx}: no complete response (closed ${r.closed}, timed out ${r.timedOut}, ${r.ms} ms): ` +
        JSON.stringify(r.bytes.toString('latin1').slice(0, 300)),
    );
  }
  return {
    status: r.response.status,
    headers: r.response.headers,
    text: r.response.body,
    json: r.response.json,
  };
}

/**
 * The invariants of every answer: no 5xx, no HTML, nosniff, no X-Powered-By, and an error is
 * the JSON error body with a code of DESIGN.md. `allowed` narrows the status.
 */
function check(
  a: Answer,
  ctx: string,
  allowed?: readonly number[],
  options: { jsonRpc?: boolean; head?: boolean; docs?: boolean } = {},
): Answer {
  cases++;
  assert.ok(a.status < 500, `${ctx}: ${a.status} ${a.text.slice(0, 300)}`);
  if (allowed) assert.ok(allowed.includes(a.status), `${ctx}: ${a.status} ${a.text.slice(0, 300)}`);
  const type = header(a, 'content-type') ?? '';
  // HTML only ever as the /docs reference page itself, never as an error.
  assert.ok(!/html/i.test(type) || (options.docs && a.status < 400), `${ctx}: HTML answer`);
  assert.equal(header(a, 'x-content-type-options'), 'nosniff', `${ctx}: nosniff`);
  assert.equal(header(a, 'x-powered-by'), undefined, `${ctx}: X-Powered-By`);
  if (a.status >= 400) {
    assert.match(
      type,
      /^application\/json/,
      `${ctx}: ${a.status} not JSON: ${a.text.slice(0, 200)}`,
    );
    if (options.head) return a; // a HEAD answer has no body
    const e = a.json?.error;
    assert.ok(e && typeof e.message === 'string', `${ctx}: no error body: ${a.text.slice(0, 200)}`);
    // The MCP endpoint answers protocol errors as JSON-RPC error objects.
    const rpc = options.jsonRpc && a.json.jsonrpc === '2.0' && Number.isInteger(e.code);
    assert.ok(rpc || ERROR_CODES.has(e.code), `${ctx}: unknown code ${e.code}`);
  }
  return a;
}

async function send(
  method: string,
  path: string,
  options: { body?: string | Buffer; headers?: Record<string, string>; auth?: boolean } = {},
): Promise<Answer> {
  const outcome = await httpRequest(base, method, path, {
    headers: {
      ...(options.auth === false ? {} : { authorization: `Bearer ${key}` }),
      ...options.headers,
    },
    ...(options.body === undefined ? {} : { body: options.body }),
    timeoutMs: CLIENT_TIMEOUT_MS,
  });
  return fromOutcome(outcome, `${method} ${path.slice(0, 120)}`);
}

/** Raw bytes: `head` lines are joined with CRLF, then the body. */
async function raw(steps: RawStep[], ctx: string, head = false): Promise<Answer> {
  return fromRaw(
    await rawExchange(port, steps, { timeoutMs: CLIENT_TIMEOUT_MS, untilResponse: true, head }),
    ctx,
  );
}

function rawHead(method: string, target: string | Buffer, headers: Array<string | Buffer>): Buffer {
  const lines: Buffer[] = [
    Buffer.concat([
      Buffer.from(`${method} `),
      Buffer.from(target as string),
      Buffer.from(' HTTP/1.1'),
    ]),
    Buffer.from('Host: 127.0.0.1'),
    ...headers.map((h) => Buffer.from(h as string)),
    Buffer.from('Connection: close'),
  ];
  const parts: Buffer[] = [];
  for (const l of lines) parts.push(l, Buffer.from('\r\n'));
  parts.push(Buffer.from('\r\n'));
  return Buffer.concat(parts);
}

async function ticketCount(org?: string): Promise<number> {
  const [row] = await queryRows<{ n: number }>(
    stack.mysqlUrl,
    org
      ? 'SELECT COUNT(*) AS n FROM tickets WHERE org_id = ?'
      : 'SELECT COUNT(*) AS n FROM tickets',
    org ? [org] : [],
  );
  return Number(row!.n);
}

const runs = (n: number) => ({ numRuns: n, ...seed() });

/** FC_SEED=<n> replays a failing run (fast-check prints the seed and path on failure). */
function seed(): { seed?: number } {
  return process.env.FC_SEED === undefined ? {} : { seed: Number(process.env.FC_SEED) };
}

// ---------------------------------------------------------------------------------------------
// A model of the contract's input rules (DESIGN.md §3)

const cpLength = (s: string) => [...s].length;
const blank = (v: unknown) =>
  v === undefined || v === null || (typeof v === 'string' && v.trim() === '');

/** A body string field: missing/blank OK unless required; else a string of ≤ max code points. */
function stringFieldOk(v: unknown, max: number, required: boolean): boolean {
  if (v !== undefined && v !== null && typeof v !== 'string') return false;
  if (blank(v)) return !required;
  return cpLength(v as string) <= max;
}

/** No string anywhere in the body (value or key) holds a lone UTF-16 surrogate. */
function wellFormedText(v: unknown): boolean {
  if (typeof v === 'string') return !/\p{Cs}/u.test(v);
  if (Array.isArray(v)) return v.every(wellFormedText);
  if (typeof v === 'object' && v !== null) {
    return Object.entries(v).every(([k, x]) => wellFormedText(k) && wellFormedText(x));
  }
  return true;
}

function createBodyValid(body: unknown): boolean {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return false;
  const b = body as Record<string, unknown>;
  return (
    wellFormedText(b) &&
    stringFieldOk(own(b, 'content'), 4000, true) &&
    stringFieldOk(own(b, 'authorName'), 200, false) &&
    stringFieldOk(own(b, 'idempotencyKey'), 200, false)
  );
}

function answerBodyValid(body: unknown): boolean {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return false;
  return (
    wellFormedText(body) &&
    stringFieldOk(own(body as Record<string, unknown>, 'question'), 2000, true)
  );
}

const own = (o: Record<string, unknown>, k: string) =>
  Object.prototype.hasOwnProperty.call(o, k) ? o[k] : undefined;

/** Percent-decoding as a strict server must do it: invalid UTF-8 makes the value invalid. */
function decodeComponent(s: string): { ok: boolean; value: string } {
  const bytes: number[] = [];
  const text = s.replace(/\+/g, ' ');
  for (let i = 0; i < text.length;) {
    if (text[i] === '%' && /^[0-9a-fA-F]{2}$/.test(text.slice(i + 1, i + 3))) {
      bytes.push(Number.parseInt(text.slice(i + 1, i + 3), 16));
      i += 3;
    } else {
      const cp = text.codePointAt(i)!;
      bytes.push(...Buffer.from(String.fromCodePoint(cp), 'utf8'));
      i += cp > 0xffff ? 2 : 1;
    }
  }
  const buf = Buffer.from(bytes);
  return { ok: isUtf8(buf), value: buf.toString('utf8') };
}

/** Expected status of GET search / tickets / faq with this raw query string. */
function expectedQueryStatus(path: string, qs: string): number {
  const pairs = qs
    .split('&')
    .filter((p) => p !== '')
    .map((p) => {
      const i = p.indexOf('=');
      const name = decodeComponent(i < 0 ? p : p.slice(0, i));
      const value = decodeComponent(i < 0 ? '' : p.slice(i + 1));
      return { name: name.value, ok: name.ok && value.ok, value: value.value };
    });
  if (pairs.some((p) => !p.ok)) return 400;
  const values = (n: string) => pairs.filter((p) => p.name === n).map((p) => p.value);
  const intOk = (n: string, min: number, max: number) => {
    const v = values(n);
    if (v.length > 1) return false;
    if (v.length === 0 || v[0]!.trim() === '') return true;
    return /^[0-9]+$/.test(v[0]!) && Number(v[0]) >= min && Number(v[0]) <= max;
  };
  const enumOk = (n: string, allowed: string[]) => {
    const v = values(n);
    if (v.length > 1) return false;
    return v.length === 0 || v[0]!.trim() === '' || allowed.includes(v[0]!);
  };
  const patternOk = (n: string, pattern: RegExp) => {
    const v = values(n);
    if (v.length > 1) return false;
    return v.length === 0 || v[0]!.trim() === '' || pattern.test(v[0]!);
  };
  if (path.endsWith('/kb/search')) {
    const q = values('query');
    if (q.length !== 1 || q[0]!.trim() === '' || cpLength(q[0]!) > 2000) return 400;
    return intOk('limit', 1, 20) ? 200 : 400;
  }
  if (path.endsWith('/tickets')) {
    const c = values('cursor');
    const ok =
      enumOk('status', ['open', 'in_progress', 'resolved', 'closed', 'duplicate']) &&
      enumOk('priority', ['critical', 'high', 'medium', 'low']) &&
      // Any category name of the shared form (an organization may name its own).
      patternOk('category', /^[A-Za-z0-9](?:[A-Za-z0-9 _.&+/-]{0,30}[A-Za-z0-9])?$/) &&
      intOk('limit', 1, 20) &&
      c.length <= 1 &&
      (c.length === 0 || c[0]!.trim() === ''); // no valid cursor is ever generated
    return ok ? 200 : 400;
  }
  return 200; // faq: no parameters
}

// ---------------------------------------------------------------------------------------------
// Generators

const pct = (bytes: Uint8Array) =>
  [...bytes].map((b) => `%${b.toString(16).padStart(2, '0').toUpperCase()}`).join('');

const INVALID_UTF8 = [
  '%FF',
  '%C3%28',
  '%E2%82',
  '%F0%28%8C%BC',
  '%ED%A0%80',
  '%C0%AF',
  '%F8%88%80%80%80',
  '%80',
];

const queryName = fc.constantFrom(
  'query',
  'query',
  'limit',
  'status',
  'priority',
  'category',
  'cursor',
  '__proto__',
  'constructor',
  'prototype',
  'toString',
  'hasOwnProperty',
  'valueOf',
  'query[]',
  'limit[0]',
  'q',
);

const queryValue: fc.Arbitrary<string> = fc.oneof(
  fc.string({ unit: 'binary', maxLength: 40 }).map(encodeURIComponent),
  fc.string({ unit: fc.constantFrom(..."abcXYZ019-._~!$'()*,;:@/?".split('')), maxLength: 20 }),
  fc.uint8Array({ minLength: 1, maxLength: 12 }).map(pct),
  fc
    .tuple(fc.string({ maxLength: 5 }), fc.constantFrom(...INVALID_UTF8))
    .map(([s, bad]) => `${encodeURIComponent(s)}${bad}`),
  fc.constantFrom(
    '',
    '%20',
    '+',
    '%00',
    'a%00b',
    '0',
    '-1',
    '1e1',
    '0x10',
    '1.0',
    '05',
    '%205',
    '20',
    '21',
    '1',
    '99999999999999999999',
    'NaN',
    '%',
    '%zz',
    'open',
    'duplicate',
    'OPEN',
    'bug',
    'critical',
    'password',
  ),
  fc.integer({ min: 1995, max: 2005 }).map((n) => 'x'.repeat(n)),
  fc.integer({ min: 1995, max: 2005 }).map((n) => '%F0%9F%98%80'.repeat(n)), // code points, not units
);

const queryString = fc
  .array(fc.tuple(queryName, queryValue), { maxLength: 6 })
  .chain((pairs) =>
    fc.constantFrom('', '&', '&&').map((sep) => pairs.map(([n, v]) => `${n}=${v}`).join(`&${sep}`)),
  );

const GET_PATHS = [
  '/api/v1/agent/kb/search',
  '/api/agent/kb/search',
  '/api/v1/agent/tickets',
  '/api/agent/tickets',
  '/api/v1/agent/faq',
];

const loneSurrogate = fc.integer({ min: 0xd800, max: 0xdfff }).map((c) => String.fromCharCode(c));
const jsonText: fc.Arbitrary<string> = fc.oneof(
  fc.string({ unit: 'binary', maxLength: 30 }),
  fc.string({
    unit: fc.oneof(fc.string({ unit: 'binary', maxLength: 1 }), loneSurrogate),
    maxLength: 8,
  }),
  fc.constantFrom('', ' ', '\t\n', '\u3000', '\u200b', '\u0000', 'a\u0000b', '\ufeff'),
  fc.integer({ min: 3995, max: 4005 }).map((n) => '😀'.repeat(n)),
  fc.integer({ min: 1995, max: 2005 }).map((n) => 'q'.repeat(n)),
  fc.integer({ min: 195, max: 205 }).map((n) => 'é'.repeat(n)),
);
const fieldValue: fc.Arbitrary<unknown> = fc.oneof(
  { weight: 4, arbitrary: jsonText },
  { weight: 2, arbitrary: fc.jsonValue({ maxDepth: 3 }) },
  { weight: 1, arbitrary: fc.constantFrom(null, true, 0, -1, 1.5, 1e308, [], {}) },
);
const fieldName = (known: string[]) =>
  fc.oneof(
    { weight: 6, arbitrary: fc.constantFrom(...known) },
    {
      weight: 3,
      arbitrary: fc.constantFrom(
        '__proto__',
        'constructor',
        'prototype',
        'toString',
        'hasOwnProperty',
        'org_id',
        'orgId',
        'id',
        'status',
      ),
    },
    { weight: 1, arbitrary: fc.string({ maxLength: 10 }) },
  );

/** A JSON object as key/value pairs, serialized by hand so repeats and __proto__ stay as written. */
const pairsArb = (known: string[]) =>
  fc.array(fc.tuple(fieldName(known), fieldValue), { maxLength: 6 });

function serializePairs(pairs: Array<[string, unknown]>): string {
  return `{${pairs.map(([k, v]) => `${JSON.stringify(k)}:${JSON.stringify(v) ?? 'null'}`).join(',')}}`;
}

// ---------------------------------------------------------------------------------------------
// Properties

test('when query strings carry wrong types, repeats, prototype keys, NUL and invalid UTF-8, then each GET answers as the contract says', async () => {
  await fc.assert(
    fc.asyncProperty(fc.constantFrom(...GET_PATHS), queryString, async (path, qs) => {
      const a = check(await send('GET', `${path}?${qs}`), `GET ${path}?${qs.slice(0, 100)}`);
      // Beyond 64 KiB of request head, 431 before any parsing.
      const expected =
        path.length + qs.length > 64 * 1024 - 512 ? 431 : expectedQueryStatus(path, qs);
      assert.equal(a.status, expected, `GET ${path}?${qs.slice(0, 300)}: ${a.text.slice(0, 200)}`);
      if (a.status === 400) assert.match(a.json.error.code, /^invalid_(request|cursor)$/);
    }),
    runs(400),
  );
});

test('when the request target carries raw bytes (non-ASCII, NUL, controls), then a 4xx JSON error or a normal answer, never a 5xx', async () => {
  const rawByte = fc.oneof(
    fc.integer({ min: 0x80, max: 0xff }),
    fc.constantFrom(0x00, 0x01, 0x7f, 0x09, 0x22, 0x3c, 0x5c, 0x60, 0x7b),
  );
  await fc.assert(
    fc.asyncProperty(
      fc.constantFrom(...GET_PATHS),
      fc.array(rawByte, { minLength: 1, maxLength: 8 }),
      async (path, bytes) => {
        const target = Buffer.concat([Buffer.from(`${path}?query=`), Buffer.from(bytes)]);
        const a = check(
          await raw(
            [rawHead('GET', target, [`Authorization: Bearer ${key}`])],
            `raw target ${bytes}`,
          ),
          `raw target ${path} ${bytes}`,
        );
        // Bytes outside visible ASCII are not a valid request target or query.
        if (bytes.some((b) => b >= 0x80 || b < 0x21 || b === 0x7f)) {
          assert.equal(a.status, 400, `${path} ${bytes}: ${a.text}`);
        }
      },
    ),
    runs(120),
  );
});

test('when JSON bodies of every shape are posted, then creations and answers follow the model and invalid ones write nothing', async () => {
  let before = 0;
  await fc.assert(
    fc.asyncProperty(
      fc.constantFrom('/api/v1/agent/tickets', '/api/agent/answers'),
      fc.oneof(
        { weight: 8, arbitrary: fc.constant(undefined) },
        { weight: 1, arbitrary: fc.jsonValue({ maxDepth: 2 }) },
      ),
      pairsArb(['content', 'authorName', 'idempotencyKey', 'question']),
      async (path, nonObject, pairs) => {
        before = await ticketCount(); // per run: a failed run must not skew the next
        const text = nonObject === undefined ? serializePairs(pairs) : JSON.stringify(nonObject);
        const parsed: unknown = JSON.parse(text);
        const isCreate = path.endsWith('/tickets');
        const valid = isCreate ? createBodyValid(parsed) : answerBodyValid(parsed);
        const a = check(
          await send('POST', path, { body: text, headers: { 'content-type': 'application/json' } }),
          `POST ${path} ${text.slice(0, 200)}`,
        );
        const ctx = `POST ${path} ${text.slice(0, 300)}: ${a.text.slice(0, 200)}`;
        const after = await ticketCount();
        if (!valid) {
          assert.equal(a.status, 400, ctx);
          assert.equal(after, before, `${ctx}: an invalid request wrote a ticket`);
        } else if (isCreate) {
          assert.equal(a.status, 201, ctx);
          assert.equal(after, before + (a.json.duplicate ? 0 : 1), `${ctx}: tickets written`);
          // Fields like org_id in the body are ignored: the ticket is the caller's (a new one
          // is the newest row of the table, named by its number in the caller's org).
          const [row] = await queryRows<{ org_id: string; number: number }>(
            stack.mysqlUrl,
            a.json.duplicate
              ? 'SELECT org_id, number FROM tickets WHERE org_id = ? AND number = ?'
              : 'SELECT org_id, number FROM tickets ORDER BY id DESC LIMIT 1',
            a.json.duplicate ? [ORG, a.json.ticket_id] : [],
          );
          assert.deepEqual([row?.org_id, Number(row?.number)], [ORG, a.json.ticket_id], ctx);
        } else {
          assert.equal(a.status, 200, ctx);
          assert.equal(after, before, ctx);
        }
        before = after;
        // No request may change the server's prototypes: `{}` still lacks content.
        if (pairs.some(([k]) => k === '__proto__' || k === 'constructor' || k === 'prototype')) {
          const empty = check(
            await send('POST', '/api/v1/agent/tickets', {
              body: '{}',
              headers: { 'content-type': 'application/json' },
            }),
            'POST {} after a prototype key',
          );
          assert.equal(empty.status, 400);
          assert.equal(empty.json.error.param, 'content');
        }
      },
    ),
    runs(500),
  );
});

test('when JSON is deeply nested, oversized or at the 64 KiB limit, then 201/400/413 as the contract says and never a 5xx', async () => {
  const before = await ticketCount();
  let created = 0;
  await fc.assert(
    fc.asyncProperty(
      fc.oneof(
        // Deep nesting at the top, in content, or in an ignored field.
        fc.record({
          kind: fc.constant('deep' as const),
          shape: fc.constantFrom('array', 'object'),
          where: fc.constantFrom('top', 'content', 'ignored'),
          depth: fc.integer({ min: 1, max: 12_000 }),
        }),
        // Sizes around the limit: a valid body padded with an ignored field.
        fc.record({
          kind: fc.constant('size' as const),
          bytes: fc.oneof(
            fc.integer({ min: BODY_LIMIT - 16, max: BODY_LIMIT + 16 }),
            fc.integer({ min: BODY_LIMIT + 17, max: 4 * BODY_LIMIT }),
          ),
        }),
      ),
      async (c) => {
        let body: string;
        let expected: number;
        if (c.kind === 'deep') {
          const [open, close] = c.shape === 'array' ? ['[', ']'] : ['{"a":', '}'];
          const nested = `${open.repeat(c.depth)}1${close.repeat(c.depth)}`;
          if (c.where === 'top') {
            body = nested;
            expected = 400;
          } else if (c.where === 'content') {
            body = `{"content":${nested}}`;
            expected = 400;
          } else {
            body = `{"content":"deep ${c.depth}","x":${nested}}`;
            expected = 201;
          }
          if (Buffer.byteLength(body) > BODY_LIMIT) expected = 413;
        } else {
          const head = '{"content":"padded","pad":"';
          const padding = Math.max(0, c.bytes - head.length - 2);
          body = `${head}${'p'.repeat(padding)}"}`;
          expected = Buffer.byteLength(body) > BODY_LIMIT ? 413 : 201;
        }
        const a = check(
          await send('POST', '/api/v1/agent/tickets', {
            body,
            headers: { 'content-type': 'application/json' },
          }),
          `${JSON.stringify(c)}`,
        );
        assert.equal(a.status, expected, `${JSON.stringify(c)}: ${a.text.slice(0, 200)}`);
        if (expected === 413) assert.equal(a.json.error.code, 'payload_too_large');
        if (a.status === 201) created++;
      },
    ),
    runs(120),
  );
  assert.equal(await ticketCount(), before + created);
});

test('when bodies are raw bytes (invalid UTF-8, NUL, truncated JSON), then 400 unless they are a valid request, and nothing is written', async () => {
  let before = 0;
  const byteChunk = fc.oneof(
    fc.uint8Array({ maxLength: 12 }).map((b) => Buffer.from(b)),
    fc.constantFrom(
      Buffer.from([0xff]),
      Buffer.from([0xc3, 0x28]),
      Buffer.from([0xed, 0xa0, 0x80]),
      Buffer.from([0xc0, 0xaf]),
      Buffer.from([0x00]),
      Buffer.from('é'),
      Buffer.from('"'),
      Buffer.from('\\'),
    ),
  );
  await fc.assert(
    fc.asyncProperty(
      fc.constantFrom('wrapped', 'bare', 'truncated'),
      fc.array(byteChunk, { maxLength: 6 }),
      async (shape, chunks) => {
        before = await ticketCount(); // per run: a failed run must not skew the next
        const inner = Buffer.concat(chunks);
        const body =
          shape === 'wrapped'
            ? Buffer.concat([Buffer.from('{"content":"raw '), inner, Buffer.from('"}')])
            : shape === 'truncated'
              ? Buffer.concat([Buffer.from('{"content":"raw'), inner])
              : inner;
        let valid = false;
        if (isUtf8(body)) {
          try {
            valid = createBodyValid(JSON.parse(body.toString('utf8')));
          } catch {
            valid = false;
          }
        }
        const a = check(
          await send('POST', '/api/v1/agent/tickets', {
            body,
            headers: { 'content-type': 'application/json' },
          }),
          `raw body ${body.toString('hex').slice(0, 100)}`,
        );
        const ctx = `raw body ${body.toString('hex').slice(0, 200)}: ${a.text.slice(0, 200)}`;
        assert.equal(a.status, valid ? 201 : 400, ctx);
        const after = await ticketCount();
        assert.equal(after, before + (a.status === 201 && !a.json.duplicate ? 1 : 0), ctx);
        before = after;
      },
    ),
    runs(200),
  );
});

test('when content types, charsets and content encodings are wrong (every combination), then 400 (413 for a decompression bomb); right ones are accepted', async () => {
  const json = '{"content":"content type probe"}';
  const TYPES: Array<[string | undefined, 'ok' | 'bad' | 'either']> = [
    [undefined, 'bad'],
    ['application/json', 'ok'],
    ['application/json; charset=utf-8', 'ok'],
    ['APPLICATION/JSON;CHARSET=UTF-8', 'ok'],
    ['application/json ; foo=bar', 'ok'],
    ['text/plain', 'bad'],
    ['text/json', 'bad'],
    ['application/x-www-form-urlencoded', 'bad'],
    ['multipart/form-data; boundary=x', 'bad'],
    ['application/merge-patch+json', 'bad'],
    ['application/jsonx', 'bad'],
    ['application/*', 'bad'],
    ['*/*', 'bad'],
    ['', 'bad'],
    [';;;', 'bad'],
    ['application/json; charset=latin1', 'bad'],
    ['application/json; charset=iso-8859-1', 'bad'],
    ['application/json; charset=nonsense', 'bad'],
    ['application/json; charset=utf-16', 'either'],
  ];
  const ENCODINGS: Array<[string | undefined, (b: Buffer) => Buffer, 'ok' | 'bad' | 'big']> = [
    [undefined, (b) => b, 'ok'],
    ['identity', (b) => b, 'ok'],
    ['gzip', (b) => gzipSync(b), 'ok'],
    ['deflate', (b) => deflateSync(b), 'ok'],
    ['gzip', (b) => b, 'bad'], // not gzip at all
    ['gzip', (b) => gzipSync(b).subarray(0, 12), 'bad'], // truncated
    ['compress', (b) => b, 'bad'],
    ['x-unknown', (b) => b, 'bad'],
    ['gzip, gzip', (b) => gzipSync(gzipSync(b)), 'bad'],
    // A bomb: 4 MB of spaces inside valid JSON inflate far past 64 KiB.
    [
      'gzip',
      () => gzipSync(Buffer.from(`{"content":"bomb","pad":"${' '.repeat(4_000_000)}"}`)),
      'big',
    ],
  ];
  // Few enough to try every combination, each once (the bomb is compressed once).
  const bomb = ENCODINGS.at(-1)!;
  const bombBody = bomb[1](Buffer.alloc(0));
  ENCODINGS[ENCODINGS.length - 1] = [bomb[0], () => bombBody, bomb[2]];
  for (const [type, typeOk] of TYPES) {
    for (const [e, [encoding, encode, encOk]] of ENCODINGS.entries()) {
      const before = await ticketCount();
      const headers: Record<string, string> = {};
      if (type !== undefined) headers['content-type'] = type;
      if (encoding !== undefined) headers['content-encoding'] = encoding;
      const a = check(
        await send('POST', '/api/v1/agent/tickets', { body: encode(Buffer.from(json)), headers }),
        `type ${type} encoding ${encoding}`,
      );
      const ctx = `type ${type} encoding ${encoding} (#${e}): ${a.text.slice(0, 200)}`;
      if (typeOk === 'bad') assert.equal(a.status, 400, ctx);
      else if (encOk === 'bad') assert.equal(a.status, 400, ctx);
      else if (encOk === 'big') assert.equal(a.status, 413, ctx);
      else if (typeOk === 'ok') assert.equal(a.status, 201, ctx);
      else assert.ok([201, 400].includes(a.status), ctx);
      const after = await ticketCount();
      assert.equal(after, before + (a.status === 201 && !a.json.duplicate ? 1 : 0), ctx);
    }
  }
});

test('when headers are random, repeated, overlong or malformed, then 4xx JSON errors (or success for a valid request), never a 5xx', async () => {
  const visible = fc.string({
    unit: fc.integer({ min: 0x20, max: 0x7e }).map((c) => String.fromCharCode(c)),
    maxLength: 60,
  });
  const before = await ticketCount();
  let created = 0;
  await fc.assert(
    fc.asyncProperty(
      fc.oneof(
        fc.record({ kind: fc.constant('authorization' as const), value: visible }),
        fc.record({
          kind: fc.constant('bearer' as const),
          value: fc.oneof(visible, fc.constant(key.slice(0, -1)), fc.constant(`${key} ${key}`)),
        }),
        fc.record({
          kind: fc.constant('idempotency' as const),
          value: fc.oneof(
            visible,
            visible.map((v) => `"${v}"`),
            fc.integer({ min: 195, max: 205 }).map((n) => 'k'.repeat(n)),
          ),
        }),
        fc.record({
          kind: fc.constant('raw' as const),
          n: fc.nat({ max: RAW_HEADER_CASES.length - 1 }),
        }),
        fc.record({
          kind: fc.constant('overlong' as const),
          bytes: fc.integer({ min: 65 * 1024, max: 200 * 1024 }),
          where: fc.constantFrom('header', 'url'),
        }),
        fc.record({
          kind: fc.constant('many' as const),
          count: fc.integer({ min: 100, max: 3000 }),
        }),
      ),
      async (c) => {
        const path = '/api/v1/agent/tickets';
        const body = JSON.stringify({ content: `header probe ${Math.random()}` });
        const ctx = JSON.stringify(c).slice(0, 200);
        if (c.kind === 'authorization' || c.kind === 'bearer') {
          const value = c.kind === 'bearer' ? `Bearer ${c.value}` : c.value;
          const a = check(
            await send('GET', path, { auth: false, headers: { authorization: value } }),
            ctx,
          );
          assert.equal(a.status, 401, `${ctx}: ${a.text}`);
        } else if (c.kind === 'idempotency') {
          const a = check(
            await send('POST', path, {
              body,
              headers: { 'content-type': 'application/json', 'idempotency-key': c.value },
            }),
            ctx,
          );
          assert.ok([201, 400].includes(a.status), `${ctx}: ${a.text}`);
          if (a.status === 400) assert.equal(a.json.error.param, 'Idempotency-Key');
          else {
            if (!a.json.duplicate) created++;
            // The same key again: the same ticket.
            const again = check(
              await send('POST', path, {
                body,
                headers: { 'content-type': 'application/json', 'idempotency-key': c.value },
              }),
              ctx,
            );
            // A key that is blank once unquoted ("", " ") counts as missing: no replay then.
            const unquoted = /^"(.*)"$/.exec(c.value.trim())?.[1] ?? c.value;
            if (unquoted.trim() !== '') {
              assert.deepEqual(again.json, { ticket_id: a.json.ticket_id, duplicate: true }, ctx);
            } else if (!again.json.duplicate) created++;
          }
        } else if (c.kind === 'raw') {
          const [lines, expected] = RAW_HEADER_CASES[c.n]!(body);
          const a = check(await raw([lines], ctx), ctx);
          assert.ok(expected.includes(a.status), `${ctx} #${c.n}: ${a.status} ${a.text}`);
          if (a.status === 201 && !a.json.duplicate) created++;
        } else if (c.kind === 'overlong') {
          const head =
            c.where === 'header'
              ? rawHead('GET', path, [
                  `Authorization: Bearer ${key}`,
                  `X-Filler: ${'f'.repeat(c.bytes)}`,
                ])
              : rawHead('GET', `/api/v1/agent/kb/search?query=${'q'.repeat(c.bytes)}`, [
                  `Authorization: Bearer ${key}`,
                ]);
          const a = check(await raw([head], ctx), ctx);
          assert.ok([414, 431].includes(a.status), `${ctx}: ${a.status}`);
        } else {
          const filler = Array.from({ length: c.count }, (_, i) => `X-H${i}: ${i}`);
          const a = check(
            await raw(
              [rawHead('GET', '/api/v1/agent/faq', [`Authorization: Bearer ${key}`, ...filler])],
              ctx,
            ),
            ctx,
          );
          assert.ok([200, 400, 431].includes(a.status), `${ctx}: ${a.status}`);
        }
      },
    ),
    runs(250),
  );
  assert.equal(await ticketCount(), before + created, 'tickets written by the header cases');
});

/** Malformed or duplicated headers sent raw; each gives the head and the acceptable statuses. */
const RAW_HEADER_CASES: Array<(body: string) => [Buffer, number[]]> = [
  // A NUL, a bare CR, DEL and obs-text in a header value.
  () => [rawHead('GET', '/api/v1/agent/faq', [`Authorization: Bearer ${key}\0`]), [400]],
  () => [rawHead('GET', '/api/v1/agent/faq', [`Authorization: Bearer ${key}`, 'X-A: a\rb']), [400]],
  () => [
    rawHead('GET', '/api/v1/agent/faq', [`Authorization: Bearer ${key}`, 'X-A: a\x7fb']),
    [200, 400],
  ],
  () => [
    Buffer.concat([
      rawHead('GET', '/api/v1/agent/faq', [`Authorization: Bearer ${key}`]).subarray(0, -2),
      Buffer.from([0x58, 0x2d, 0x42, 0x3a, 0x20, 0xff, 0xfe, 0x0d, 0x0a, 0x0d, 0x0a]),
    ]),
    [200, 400],
  ],
  // Invalid header names, obs-fold continuation lines, a missing colon.
  () => [rawHead('GET', '/api/v1/agent/faq', [`Authorization: Bearer ${key}`, 'X A: b']), [400]],
  () => [
    rawHead('GET', '/api/v1/agent/faq', [`Authorization: Bearer ${key}`, 'X-A: a', ' folded']),
    [400],
  ],
  () => [rawHead('GET', '/api/v1/agent/faq', [`Authorization: Bearer ${key}`, 'nocolon']), [400]],
  // Two Authorization headers: the first counts (Node drops the repeat).
  () => [
    rawHead('GET', '/api/v1/agent/faq', [
      `Authorization: Bearer ${key}`,
      'Authorization: Bearer x',
    ]),
    [200, 400],
  ],
  () => [
    rawHead('GET', '/api/v1/agent/faq', [
      'Authorization: Bearer x',
      `Authorization: Bearer ${key}`,
    ]),
    [401, 400],
  ],
  // Request smuggling shapes: two different Content-Lengths, Content-Length with chunked.
  (body) => [
    Buffer.concat([
      rawHead('POST', '/api/v1/agent/tickets', [
        `Authorization: Bearer ${key}`,
        'Content-Type: application/json',
        `Content-Length: ${body.length}`,
        `Content-Length: ${body.length + 1}`,
      ]),
      Buffer.from(body),
    ]),
    [400],
  ],
  (body) => [
    Buffer.concat([
      rawHead('POST', '/api/v1/agent/tickets', [
        `Authorization: Bearer ${key}`,
        'Content-Type: application/json',
        `Content-Length: ${body.length}`,
        'Transfer-Encoding: chunked',
      ]),
      Buffer.from(`${body.length.toString(16)}\r\n${body}\r\n0\r\n\r\n`),
    ]),
    [400],
  ],
  (body) => [
    Buffer.concat([
      rawHead('POST', '/api/v1/agent/tickets', [
        `Authorization: Bearer ${key}`,
        'Content-Type: application/json',
        'Content-Length: -1',
      ]),
      Buffer.from(body),
    ]),
    [400],
  ],
  // Two Idempotency-Key headers are joined into one list value: not a valid key.
  (body) => [
    Buffer.concat([
      rawHead('POST', '/api/v1/agent/tickets', [
        `Authorization: Bearer ${key}`,
        'Content-Type: application/json',
        'Idempotency-Key: "a"',
        'Idempotency-Key: "b"',
        `Content-Length: ${body.length}`,
      ]),
      Buffer.from(body),
    ]),
    [400],
  ],
  // Two Content-Types: the first counts.
  (body) => [
    Buffer.concat([
      rawHead('POST', '/api/v1/agent/tickets', [
        `Authorization: Bearer ${key}`,
        'Content-Type: text/plain',
        'Content-Type: application/json',
        `Content-Length: ${body.length}`,
      ]),
      Buffer.from(body),
    ]),
    [400],
  ],
  // No Host header in HTTP/1.1; HTTP/1.0; a garbage protocol version.
  () => [
    Buffer.from(`GET /api/v1/agent/faq HTTP/1.1\r\nAuthorization: Bearer ${key}\r\n\r\n`),
    [400],
  ],
  () => [
    Buffer.from(`GET /api/v1/agent/faq HTTP/1.0\r\nAuthorization: Bearer ${key}\r\n\r\n`),
    [200],
  ],
  () => [Buffer.from(`GET /api/v1/agent/faq HTTP/9.9\r\nHost: x\r\n\r\n`), [400, 505]],
];

test('when methods and paths are odd, then 404/405/401/400 JSON errors (and 2xx where they are real routes)', async () => {
  const METHODS = [
    'GET',
    'HEAD',
    'POST',
    'PUT',
    'PATCH',
    'DELETE',
    'OPTIONS',
    'TRACE',
    'PROPFIND',
    'PURGE',
    'SEARCH',
    'FOO',
    'get',
  ];
  const segment = fc.oneof(
    fc.constantFrom(
      'api',
      'v1',
      'agent',
      'tickets',
      'kb',
      'search',
      'faq',
      'answers',
      'mcp',
      'admin',
      '..',
      '.',
      '',
      '%2e%2e',
      '%2F',
      '%00',
      '%',
      '%zz',
      '%FF',
      'openapi.json',
      '.well-known',
      '__proto__',
      'constructor',
    ),
    fc.string({ unit: 'binary', maxLength: 8 }).map(encodeURIComponent),
  );
  await fc.assert(
    fc.asyncProperty(
      fc.constantFrom(...METHODS),
      fc.oneof(
        fc.constantFrom(
          '/api/v1/agent/tickets',
          '/api/agent/kb/search',
          '/api/v1/agent/faq',
          '/api/agent/answers',
          '/api/mcp',
          '/healthz',
          '/readyz',
          '/api/v1/agent/openapi.json',
          '/.well-known/oauth-protected-resource',
          '/docs',
          '/',
        ),
        fc.array(segment, { minLength: 1, maxLength: 6 }).map((s) => `/${s.join('/')}`),
      ),
      async (method, path) => {
        const ctx = `${method} ${path}`;
        const a = check(
          await raw(
            [rawHead(method, path, [`Authorization: Bearer ${key}`, 'Content-Length: 0'])],
            ctx,
            method === 'HEAD',
          ),
          ctx,
          undefined,
          {
            jsonRpc: path.startsWith('/api/mcp'),
            head: method === 'HEAD',
            docs: path.startsWith('/docs'),
          },
        );
        if (method === 'HEAD') return;
        assert.ok(a.status < 500, ctx);
      },
    ),
    runs(250),
  );
  // CONNECT is not routed: a JSON 405 (or a plain close), never a hang.
  const connect = await rawExchange(
    port,
    [`CONNECT 127.0.0.1:1 HTTP/1.1\r\nHost: 127.0.0.1:1\r\n\r\n`],
    {
      timeoutMs: CLIENT_TIMEOUT_MS,
      untilResponse: true,
    },
  );
  assert.ok(!connect.timedOut, 'CONNECT hung');
  if (connect.response) check(fromRaw(connect, 'CONNECT'), 'CONNECT', [400, 405]);
});

test('when bodies are chunked (split anywhere, over 64 KiB, malformed), then 201/413/400 and nothing extra is written', async () => {
  const before = await ticketCount();
  let created = 0;
  await fc.assert(
    fc.asyncProperty(
      fc.oneof(
        fc.record({
          kind: fc.constant('valid' as const),
          splits: fc.array(fc.integer({ min: 1, max: 40 }), { maxLength: 10 }),
        }),
        fc.record({
          kind: fc.constant('big' as const),
          bytes: fc.integer({ min: BODY_LIMIT + 1, max: 3 * BODY_LIMIT }),
          chunk: fc.integer({ min: 1000, max: 20_000 }),
        }),
        fc.record({
          kind: fc.constant('bad-size' as const),
          size: fc.constantFrom('zz', '-1', '', ' ', '0x10', 'ffffffffffffffffff'),
        }),
        fc.record({
          kind: fc.constant('extension' as const),
          ext: fc.constantFrom(';a=b', ';a="x"', ';;', ';='),
        }),
      ),
      async (c) => {
        const ctx = JSON.stringify(c).slice(0, 200);
        const head = rawHead('POST', '/api/v1/agent/tickets', [
          `Authorization: Bearer ${key}`,
          'Content-Type: application/json',
          'Transfer-Encoding: chunked',
        ]);
        let chunks: Buffer;
        let expected: number[];
        if (c.kind === 'valid' || c.kind === 'extension') {
          const body = Buffer.from(JSON.stringify({ content: `chunked ${Math.random()}` }));
          const parts: Buffer[] = [];
          let at = 0;
          for (const s of c.kind === 'valid' ? c.splits : [8]) {
            if (at >= body.length) break;
            const piece = body.subarray(at, at + s);
            const ext = c.kind === 'extension' ? c.ext : '';
            parts.push(
              Buffer.from(`${piece.length.toString(16)}${ext}\r\n`),
              piece,
              Buffer.from('\r\n'),
            );
            at += s;
          }
          if (at < body.length) {
            const piece = body.subarray(at);
            parts.push(Buffer.from(`${piece.length.toString(16)}\r\n`), piece, Buffer.from('\r\n'));
          }
          parts.push(Buffer.from('0\r\n\r\n'));
          chunks = Buffer.concat(parts);
          // An extension without a name is malformed (RFC 9112 §7.1.1).
          // An extension without a name is malformed (RFC 9112 §7.1.1): refused or tolerated.
          expected = c.kind === 'extension' && /;[;=]/.test(c.ext) ? [201, 400] : [201];
        } else if (c.kind === 'big') {
          const body = Buffer.from(`{"content":"big","pad":"${'p'.repeat(c.bytes)}"}`);
          const parts: Buffer[] = [];
          for (let at = 0; at < body.length; at += c.chunk) {
            const piece = body.subarray(at, at + c.chunk);
            parts.push(Buffer.from(`${piece.length.toString(16)}\r\n`), piece, Buffer.from('\r\n'));
          }
          parts.push(Buffer.from('0\r\n\r\n'));
          chunks = Buffer.concat(parts);
          expected = [413];
        } else {
          chunks = Buffer.from(`${c.size}\r\n{"content":"x"}\r\n0\r\n\r\n`);
          expected = [400];
        }
        const a = check(await raw([head, chunks], ctx), ctx);
        assert.ok(expected.includes(a.status), `${ctx}: ${a.status} ${a.text.slice(0, 200)}`);
        if (a.status === 201) created++;
      },
    ),
    runs(80),
  );
  assert.equal(await ticketCount(), before + created);
});

test('when a client trickles its headers or body, then the server ends it with a 408 JSON or closes it in bounded time', async () => {
  const bound = REQUEST_TIMEOUT_MS + 3_000;
  const drip = (text: string, everyMs: number): RawStep[] =>
    [...text].flatMap((ch) => [ch, { pauseMs: everyMs }]);
  const body = JSON.stringify({ content: 'slow body' });
  // All three at once: each is bounded by the server's timeouts, not by the others.
  const [slowHeaders, slowBody, stalledChunked] = await Promise.all([
    rawExchange(
      port,
      drip(
        `GET /api/v1/agent/faq HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${key}\r\nX-Slow: ${'s'.repeat(200)}\r\n\r\n`,
        100,
      ),
      { timeoutMs: bound + 5_000 },
    ),
    rawExchange(
      port,
      [
        rawHead('POST', '/api/v1/agent/tickets', [
          `Authorization: Bearer ${key}`,
          'Content-Type: application/json',
          `Content-Length: ${body.length + 100}`,
        ]),
        ...drip(body, 500),
      ],
      { timeoutMs: bound + 5_000 },
    ),
    rawExchange(
      port,
      [
        rawHead('POST', '/api/v1/agent/tickets', [
          `Authorization: Bearer ${key}`,
          'Content-Type: application/json',
          'Transfer-Encoding: chunked',
        ]),
        '5\r\n{"con',
      ],
      { timeoutMs: bound + 5_000 },
    ),
  ]);
  const seen: string[] = [];
  for (const [name, r] of [
    ['slow headers', slowHeaders],
    ['slow body', slowBody],
    ['stalled chunked body', stalledChunked],
  ] as const) {
    cases++;
    assert.ok(!r.timedOut, `${name}: still open after ${r.ms} ms`);
    assert.ok(r.ms <= bound, `${name}: ended after ${r.ms} ms (bound ${bound} ms)`);
    if (r.response) {
      check(fromRaw(r, name), name, [400, 408]);
    } else {
      assert.ok(r.closed, `${name}: neither answered nor closed`);
    }
    seen.push(`${name}: ${r.response ? r.response.status : 'closed'} after ${r.ms} ms`);
  }
  console.log(`  slow clients: ${seen.join('; ')}`);
});

test('when MCP messages are malformed or hostile, then JSON-RPC or JSON errors (never 5xx), and only successful create_ticket calls write', async () => {
  const toolArgs = fc.oneof(
    fc.jsonValue({ maxDepth: 2 }),
    pairsArb([
      'query',
      'limit',
      'content',
      'authorName',
      'idempotencyKey',
      'question',
      'status',
      'cursor',
    ]).map((pairs) => JSON.parse(serializePairs(pairs)) as unknown),
  );
  const message = fc.oneof(
    {
      weight: 4,
      arbitrary: fc
        .tuple(
          fc.oneof(fc.constantFrom(...MCP_TOOLS), fc.string({ maxLength: 12 })),
          toolArgs,
          fc.nat(),
        )
        .map(([name, args, id]) => toolCall(name, args, id) as unknown),
    },
    {
      weight: 2,
      arbitrary: fc.record(
        {
          jsonrpc: fc.oneof(fc.constant('2.0'), fc.jsonValue({ maxDepth: 1 })),
          id: fc.oneof(
            fc.integer(),
            fc.string({ maxLength: 5 }),
            fc.constant(null),
            fc.jsonValue({ maxDepth: 1 }),
          ),
          method: fc.oneof(
            fc.constantFrom(
              'initialize',
              'tools/list',
              'tools/call',
              'ping',
              'resources/list',
              'prompts/list',
              'notifications/initialized',
              'logging/setLevel',
              'completion/complete',
              '__proto__',
            ),
            fc.string({ maxLength: 12 }),
          ),
          params: fc.jsonValue({ maxDepth: 2 }),
        },
        { requiredKeys: [] },
      ),
    },
    { weight: 1, arbitrary: fc.jsonValue({ maxDepth: 2 }) },
  );
  const body = fc.oneof(
    { weight: 5, arbitrary: message.map((m) => Buffer.from(JSON.stringify(m) ?? 'null')) },
    {
      weight: 1,
      arbitrary: fc
        .array(message, { minLength: 1, maxLength: 3 })
        .map((m) => Buffer.from(JSON.stringify(m))),
    },
    {
      weight: 1,
      arbitrary: fc
        .uint8Array({ maxLength: 40 })
        .map((b) =>
          Buffer.concat([Buffer.from('{"jsonrpc":"2.0","id":1,"method":"'), Buffer.from(b)]),
        ),
    },
  );
  const headerSet = fc.constantFrom<Record<string, string>>(
    { ...MCP_HEADERS, 'content-type': 'application/json' },
    { ...MCP_HEADERS, 'content-type': 'application/json' },
    { ...MCP_HEADERS, 'content-type': 'application/json' },
    { 'content-type': 'application/json' },
    { ...MCP_HEADERS, 'content-type': 'text/plain' },
    { ...MCP_HEADERS, 'content-type': 'application/json', 'mcp-protocol-version': '1999-01-01' },
    { ...MCP_HEADERS, 'content-type': 'application/json', 'mcp-session-id': 'nope' },
    { accept: 'text/html', 'content-type': 'application/json' },
  );
  let before = 0;
  await fc.assert(
    fc.asyncProperty(body, headerSet, async (b, headers) => {
      before = await ticketCount(); // per run: a failed run must not skew the next
      const a = await send('POST', '/api/mcp', { body: b, headers });
      const ctx = `MCP ${b.toString('utf8').slice(0, 200)} ${JSON.stringify(headers)}: ${a.status} ${a.text.slice(0, 300)}`;
      cases++;
      assert.ok(a.status < 500, ctx);
      assert.ok([200, 202, 400, 404, 405, 406, 413, 415].includes(a.status), ctx);
      assert.equal(header(a, 'x-content-type-options'), 'nosniff', ctx);
      if (a.text !== '') {
        assert.match(header(a, 'content-type') ?? '', /^application\/json/, ctx);
        assert.ok(a.json !== undefined, ctx);
        if (a.status >= 400 && a.json.jsonrpc === undefined) {
          assert.ok(ERROR_CODES.has(a.json.error?.code), ctx);
        }
      }
      // Tickets are written only by create_ticket calls that succeeded.
      let expectedNew = 0;
      if (a.status === 200) {
        const responses = Array.isArray(a.json) ? a.json : [a.json];
        for (const r of responses) {
          const sc = r?.result?.structuredContent;
          if (r?.result?.isError !== true && sc && 'ticket_id' in sc && sc.duplicate === false)
            expectedNew++;
        }
      }
      const after = await ticketCount();
      assert.equal(after, before + expectedNew, `${ctx}: tickets written`);
      before = after;
    }),
    runs(400),
  );
});

test('when the admin API gets hostile bodies, paths and parameters, then 2xx or 4xx JSON, never a 5xx', async () => {
  const seg = fc.oneof(
    fc.constantFrom(ADMIN_ORG, 'nope', '__proto__', '..', '%00', '%FF', '', 'x'.repeat(300)),
    fc.string({ unit: 'binary', maxLength: 10 }).map(encodeURIComponent),
  );
  const anyBody = fc.oneof(
    fc.jsonValue({ maxDepth: 3 }).map((v) => JSON.stringify(v)),
    pairsArb([
      'name',
      'id',
      'scopes',
      'status',
      'week_start',
      'rate_limit_per_key_per_min',
      'deflection_monthly_limit',
      'high_confidence_threshold',
    ]).map(serializePairs),
    fc
      .array(
        fc.record(
          {
            id: fc.oneof(fc.string({ maxLength: 8 }), fc.integer()),
            question: jsonText,
            answer: jsonText,
          },
          { requiredKeys: [] },
        ),
        { maxLength: 4 },
      )
      .map((rows) => JSON.stringify(rows)),
    fc.uint8Array({ maxLength: 30 }).map((b) => Buffer.from(b).toString('latin1')),
  );
  const route = fc.oneof(
    fc.tuple(fc.constant('POST'), fc.constant('/admin/v1/orgs')),
    fc.tuple(
      fc.constant('PATCH'),
      seg.map((o) => `/admin/v1/orgs/${o}/settings`),
    ),
    fc.tuple(
      fc.constant('POST'),
      seg.map((o) => `/admin/v1/orgs/${o}/keys`),
    ),
    fc.tuple(
      fc.constant('DELETE'),
      seg.map((k) => `/admin/v1/orgs/${ADMIN_ORG}/keys/${k}`),
    ),
    fc.tuple(
      fc.constant('POST'),
      seg.map((o) => `/admin/v1/orgs/${o}/kb/entries`),
    ),
    fc.tuple(
      fc.constant('DELETE'),
      seg.map((e) => `/admin/v1/orgs/${ADMIN_ORG}/kb/entries/${e}`),
    ),
    fc.tuple(
      fc.constant('PATCH'),
      seg.map((t) => `/admin/v1/orgs/${ADMIN_ORG}/tickets/${t}`),
    ),
    fc.tuple(
      fc.constant('POST'),
      seg.map((o) => `/admin/v1/orgs/${o}/digests`),
    ),
    fc.tuple(
      fc.constantFrom('GET', 'PUT', 'OPTIONS'),
      seg.map((o) => `/admin/v1/orgs/${o}/usage`),
    ),
  );
  const adminPort = Number(new URL(stack.adminUrl()).port);
  await fc.assert(
    fc.asyncProperty(
      route,
      anyBody,
      fc.constantFrom('application/json', 'application/x-ndjson', 'text/plain', 'text/csv'),
      async ([method, path], body, type) => {
        const o = await httpRequest(`http://127.0.0.1:${adminPort}`, method, path, {
          headers: { authorization: `Bearer ${stack.adminToken}`, 'content-type': type },
          body,
          timeoutMs: CLIENT_TIMEOUT_MS,
        });
        const ctx = `${method} ${path} ${type} ${body.slice(0, 150)}`;
        const a = fromOutcome(o, ctx);
        cases++;
        assert.ok(a.status < 500, `${ctx}: ${a.status} ${a.text.slice(0, 300)}`);
        assert.ok(!/html/i.test(header(a, 'content-type') ?? ''), ctx);
        if (a.status >= 400) {
          assert.match(header(a, 'content-type') ?? '', /^application\/json/, ctx);
          assert.ok(
            ERROR_CODES.has(a.json?.error?.code) || a.json?.error?.code === 'conflict',
            `${ctx}: ${a.text}`,
          );
        }
      },
    ),
    runs(250),
  );
});

test('when the fuzzing is over, then every process is alive, healthy and still serves valid requests', async () => {
  for (const p of [...stack.upstreams.values(), ...stack.gateways]) {
    assert.ok(p.running, `${p.name} died:\n${p.logs().slice(-3000)}`);
  }
  const healthz = await api(base, 'GET', '/healthz');
  assert.equal(healthz.status, 200);
  const readyz = await api(base, 'GET', '/readyz');
  assert.equal(readyz.status, 200, readyz.text);
  const created = await api(base, 'POST', '/api/v1/agent/tickets', {
    key,
    body: { content: 'still works after fuzzing' },
  });
  assert.equal(created.status, 201, created.text);
  const search = await api(base, 'GET', '/api/v1/agent/kb/search?query=password', { key });
  assert.equal(search.status, 200);
  assert.equal(search.json.results[0].question, 'How do I reset my password?');
  assert.doesNotMatch(stack.allLogs(), /"level":"?(fatal|60)/);
  assert.deepEqual(leakedSecrets(stack.allLogs(), secrets), [], 'secrets in service logs');
  console.log(`fuzz: cases tried ${cases}`);
});
