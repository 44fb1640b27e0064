// End-to-end: the MCP endpoint (POST /api/mcp, Streamable HTTP, stateless) through the gateway
// with the SDK's own Client, against real services on MariaDB, Redis and NATS. Each tool's
// structured result must equal the REST body for the same input; scopes, origins, rate limits
// and the deflection ledger are the REST ones.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { SHORT_KB } from '../support/kb.js';
import { callTool, INITIALIZE, MCP_TOOLS, toolCall } from '../support/mcp.js';
import { redisDatabase } from '../support/security.js';
import { ALL_SCOPES, Stack, api, waitFor } from '../support/stack.js';

const DIGEST_BUILT = existsSync(
  fileURLToPath(new URL('../../services/digest/dist/main.js', import.meta.url)),
);
const ALLOWED_ORIGIN = 'https://agent.example.test';
const KB = SHORT_KB.slice(0, 2);
const COVERED = 'How do I export tickets to CSV?';

let stack: Stack;
let key: string; // every scope, organization mcp-main
let client: Client;
const clients: Client[] = [];

async function connect(k: string, headers: Record<string, string> = {}): Promise<Client> {
  const c = new Client({ name: 'e2e-mcp', version: '1.0.0' });
  const transport = new StreamableHTTPClientTransport(new URL(`${stack.baseUrl()}/api/mcp`), {
    requestInit: { headers: { authorization: `Bearer ${k}`, ...headers } },
  });
  await c.connect(transport);
  clients.push(c);
  return c;
}

/** One JSON-RPC message over plain HTTP, for what the SDK client does not expose (status, headers). */
function rpc(body: unknown, options: { key?: string; headers?: Record<string, string> } = {}) {
  return api(stack.baseUrl(), 'POST', '/api/mcp', {
    ...(options.key ? { key: options.key } : {}),
    body,
    headers: {
      accept: 'application/json, text/event-stream',
      'mcp-protocol-version': '2025-06-18',
      ...options.headers,
    },
  });
}

/** A successful tool result: structured content, and the same JSON as text. */
async function toolResult(c: Client, name: string, args: Record<string, unknown>) {
  const result = await callTool(c, name, args);
  assert.notEqual(result.isError, true, JSON.stringify(result));
  assert.deepEqual(JSON.parse(result.content[0]!.text!), result.structuredContent);
  return result.structuredContent!;
}

/** A failed tool call: isError with the REST error body as text. */
async function toolError(c: Client, name: string, args: Record<string, unknown>) {
  const result = await callTool(c, name, args);
  assert.equal(result.isError, true, JSON.stringify(result));
  assert.equal(result.structuredContent, undefined);
  return JSON.parse(result.content[0]!.text!).error as {
    code: string;
    message: string;
    param?: string;
  };
}

const rest = (k: string, method: string, path: string, body?: unknown) =>
  api(stack.baseUrl(), method, `/api/v1/agent${path}`, { key: k, body });

before(async () => {
  stack = await Stack.onTestBackends('e2e-mcp', {
    services: ['tickets', 'knowledge', 'answers', ...(DIGEST_BUILT ? ['digest'] : [])],
    redisUrl: redisDatabase(4),
    env: {
      MCP_ALLOWED_ORIGINS: ALLOWED_ORIGIN,
      DIGEST_METRICS_PORT: '0',
      DIGEST_SCHEDULER_ENABLED: 'false',
    },
  });
  key = await stack.orgWithKey('mcp-main');
  await stack.admin('POST', '/admin/v1/orgs/mcp-main/kb/entries', KB);
  client = await connect(key);
});

after(async () => {
  for (const c of clients) await c.close().catch(() => undefined);
  await stack?.stop();
});

test('when the tools are listed, then the five operations appear with JSON-schema inputs and outputs', async () => {
  const { tools } = await client.listTools();
  assert.deepEqual(
    tools.map((t) => t.name),
    [...MCP_TOOLS],
  );
  const byName = new Map(tools.map((t) => [t.name, t]));
  const search = byName.get('search_knowledge_base')!;
  assert.equal(search.inputSchema.type, 'object');
  assert.deepEqual(search.inputSchema.required, ['query']);
  const props = search.inputSchema.properties as Record<string, Record<string, unknown>>;
  assert.deepEqual(
    [props.query!.type, props.query!.minLength, props.query!.maxLength],
    ['string', 1, 2000],
  );
  assert.deepEqual(
    [props.limit!.type, props.limit!.minimum, props.limit!.maximum, props.limit!.default],
    ['integer', 1, 20, 5],
  );
  const create = byName.get('create_ticket')!;
  assert.deepEqual(Object.keys(create.inputSchema.properties ?? {}), [
    'content',
    'authorName',
    'idempotencyKey',
  ]);
  assert.deepEqual(create.inputSchema.required, ['content']);
  for (const t of tools) {
    assert.equal(t.outputSchema?.type, 'object', t.name);
    assert.match(t.description ?? '', /Requires the [a-z]+:[a-z]+ scope\./);
  }
  assert.equal(byName.get('list_tickets')!.annotations?.readOnlyHint, true);
  assert.equal(byName.get('create_ticket')!.annotations?.readOnlyHint, false);
});

test('when a tool is called, then its structured result equals the REST body for the same input', async () => {
  const search = await toolResult(client, 'search_knowledge_base', {
    query: 'I forgot my password',
    limit: 3,
  });
  const searchRest = await rest(key, 'GET', `/kb/search?query=I%20forgot%20my%20password&limit=3`);
  assert.deepEqual(search, searchRest.json);
  assert.equal((search.results as Array<{ question: string }>)[0]!.question, KB[0]!.question);

  const faqRest = await rest(key, 'GET', '/faq');
  if (DIGEST_BUILT) {
    assert.deepEqual(await toolResult(client, 'get_faq_digest', {}), faqRest.json);
  } else {
    // Without the digest service both surfaces report it unavailable.
    assert.equal(faqRest.status, 503);
    assert.deepEqual(await toolError(client, 'get_faq_digest', {}), faqRest.json.error);
  }

  const answer = await toolResult(client, 'generate_answer', { question: COVERED });
  assert.deepEqual(answer, (await rest(key, 'POST', '/answers', { question: COVERED })).json);
  assert.equal(answer.high_confidence, true);

  // The same idempotency key through either surface: one ticket.
  const viaRest = await rest(key, 'POST', '/tickets', {
    content: 'Export fails for large date ranges',
    idempotencyKey: 'mcp-k1',
  });
  assert.equal(viaRest.status, 201);
  const replay = await toolResult(client, 'create_ticket', {
    content: 'a different body: the first call wins',
    idempotencyKey: 'mcp-k1',
  });
  assert.deepEqual(replay, { ticket_id: viaRest.json.ticket_id, duplicate: true });
  const viaMcp = await toolResult(client, 'create_ticket', {
    content: 'Where can I find invoices?',
    authorName: 'ana',
    idempotencyKey: 'mcp-k2',
  });
  assert.equal(viaMcp.duplicate, false);
  const restReplay = await api(stack.baseUrl(), 'POST', '/api/agent/tickets', {
    key,
    body: { content: 'x' },
    headers: { 'idempotency-key': 'mcp-k2' },
  });
  assert.deepEqual(restReplay.json, { ticket_id: viaMcp.ticket_id, duplicate: true });

  // Triage updates new tickets asynchronously: compare once both are triaged.
  await waitFor(
    async () =>
      (await rest(key, 'GET', '/tickets')).json.tickets.every(
        (t: { category: string | null }) => t.category !== null,
      ),
    20_000,
    () => 'tickets not triaged',
  );
  const page = await toolResult(client, 'list_tickets', { limit: 1 });
  assert.deepEqual(page, (await rest(key, 'GET', '/tickets?limit=1')).json);
  assert.equal(typeof page.next_cursor, 'string');
  const next = await toolResult(client, 'list_tickets', { limit: 1, cursor: page.next_cursor });
  const nextRest = await rest(key, 'GET', `/tickets?limit=1&cursor=${page.next_cursor}`);
  assert.deepEqual(next, nextRest.json);
  assert.notDeepEqual(next, page);
});

test('when tool arguments are invalid, then the tool result isError with the REST code and param', async () => {
  const cases: Array<[string, Record<string, unknown>, string, string]> = [
    ['search_knowledge_base', {}, 'invalid_request', 'query'],
    ['search_knowledge_base', { query: '   ' }, 'invalid_request', 'query'],
    ['search_knowledge_base', { query: 'x', limit: 0 }, 'invalid_request', 'limit'],
    ['search_knowledge_base', { query: 'x', limit: '5' }, 'invalid_request', 'limit'],
    ['list_tickets', { status: 'pending' }, 'invalid_request', 'status'],
    ['list_tickets', { cursor: 'forged' }, 'invalid_cursor', 'cursor'],
    ['create_ticket', { content: 'x'.repeat(4001) }, 'invalid_request', 'content'],
    ['create_ticket', { content: 'x', idempotencyKey: 7 }, 'invalid_request', 'idempotencyKey'],
    ['generate_answer', { question: '' }, 'invalid_request', 'question'],
  ];
  for (const [name, args, code, param] of cases) {
    const error = await toolError(client, name, args);
    assert.deepEqual([error.code, error.param], [code, param], `${name} ${JSON.stringify(args)}`);
  }
  // Lengths are code points, as for REST: 2000 emoji (4000 UTF-16 units) are fine.
  const ok = await callTool(client, 'search_knowledge_base', { query: '😀'.repeat(2000) });
  assert.notEqual(ok.isError, true);
});

test('when the key lacks the tool scope, then HTTP 403 with the insufficient_scope challenge; initialize and tools/list need any valid key, which sees its tools only', async () => {
  const kbOnly = await stack.keyFor('mcp-main', ['kb:read']);
  const limited = await connect(kbOnly);
  assert.deepEqual(
    (await limited.listTools()).tools.map((t) => t.name),
    ['search_knowledge_base'],
  );
  await toolResult(limited, 'search_knowledge_base', { query: 'password' });
  await assert.rejects(
    callTool(limited, 'list_tickets', {}),
    (err: Error & { code?: number }) => err.code === 403 && /insufficient_scope/.test(err.message),
  );
  const res = await rpc(toolCall('generate_answer', { question: COVERED }), { key: kbOnly });
  assert.equal(res.status, 403);
  assert.equal(res.json.error.code, 'insufficient_scope');
  assert.equal(
    res.headers.get('www-authenticate'),
    `Bearer error="insufficient_scope", scope="answers:write", resource_metadata="${stack.baseUrl()}/.well-known/oauth-protected-resource/api/mcp"`,
  );
  assert.equal(res.headers.get('ratelimit'), null, '403 is not counted');
});

test('when no valid key is sent, then 401 pointing at the MCP resource metadata', async () => {
  for (const k of [undefined, 'sak_live_nope']) {
    const res = await rpc(INITIALIZE, k ? { key: k } : {});
    assert.equal(res.status, 401);
    assert.equal(res.json.error.code, 'unauthorized');
    assert.match(
      res.headers.get('www-authenticate') ?? '',
      new RegExp(
        `resource_metadata="${stack.baseUrl()}/\\.well-known/oauth-protected-resource/api/mcp"`,
      ),
    );
  }
  await assert.rejects(
    connect('sak_live_nope'),
    (err: Error & { code?: number }) => err.code === 401,
  );
  const meta = await api(stack.baseUrl(), 'GET', '/.well-known/oauth-protected-resource/api/mcp');
  assert.equal(meta.status, 200);
  assert.equal(meta.json.resource, `${stack.baseUrl()}/api/mcp`);
  assert.deepEqual(meta.json.scopes_supported, ALL_SCOPES);
  assert.deepEqual(meta.json.bearer_methods_supported, ['header']);
});

test('when the Origin header is not allowed, then 403 JSON; an allowed origin passes', async () => {
  for (const origin of ['https://evil.example', 'null', `${ALLOWED_ORIGIN}:8443`]) {
    const res = await rpc(INITIALIZE, { key, headers: { origin } });
    assert.equal(res.status, 403, origin);
    assert.match(res.headers.get('content-type') ?? '', /^application\/json/);
    assert.equal(res.json.error.code, 'origin_not_allowed');
  }
  const allowed = await rpc(INITIALIZE, { key, headers: { origin: ALLOWED_ORIGIN } });
  assert.equal(allowed.status, 200, allowed.text);
  assert.equal(allowed.json.result.serverInfo.name, 'support-agent');
  await connect(key, { origin: ALLOWED_ORIGIN });
});

test('when GET or DELETE is sent, then 405 with Allow: POST and a JSON error', async () => {
  for (const method of ['GET', 'DELETE']) {
    const res = await api(stack.baseUrl(), method, '/api/mcp', {
      key,
      headers: { accept: 'text/event-stream' },
    });
    assert.equal(res.status, 405);
    assert.equal(res.headers.get('allow'), 'POST');
    assert.equal(res.json.error.code, 'method_not_allowed');
  }
});

test('when the rate limit is used up, then a tools/call is a rate_limited tool error and other requests are HTTP 429; every request counts', async () => {
  const k = await stack.orgWithKey('mcp-rate', ALL_SCOPES, { rate_limit_per_key_per_min: 4 });
  const first = await rpc(INITIALIZE, { key: k });
  assert.match(first.headers.get('ratelimit') ?? '', /^"key";r=3;t=\d+$/);
  const c = await connect(k); // initialize + notifications/initialized: requests 2 and 3
  await toolResult(c, 'search_knowledge_base', { query: 'password' }); // 4
  const error = await toolError(c, 'search_knowledge_base', { query: 'password' });
  assert.equal(error.code, 'rate_limited');
  const list = await rpc({ jsonrpc: '2.0', id: 3, method: 'tools/list' }, { key: k });
  assert.equal(list.status, 429);
  assert.equal(list.json.error.code, 'rate_limited');
  assert.ok(Number(list.headers.get('retry-after')) >= 1);
  assert.match(list.headers.get('ratelimit') ?? '', /^"key";r=0;t=\d+$/);
});

test('when the monthly deflection limit is reached, then generate_answer is a deflection_limit_reached tool error', async () => {
  const k = await stack.orgWithKey('mcp-deflect', ALL_SCOPES, { deflection_monthly_limit: 1 });
  await stack.admin('POST', '/admin/v1/orgs/mcp-deflect/kb/entries', KB);
  const c = await connect(k);
  const answer = await toolResult(c, 'generate_answer', { question: COVERED });
  assert.equal(answer.high_confidence, true, 'the one slot is used');
  const error = await toolError(c, 'generate_answer', { question: COVERED });
  assert.equal(error.code, 'deflection_limit_reached');
  const rest429 = await api(stack.baseUrl(), 'POST', '/api/v1/agent/answers', {
    key: k,
    body: { question: COVERED },
  });
  assert.equal(rest429.status, 429, 'the same ledger as REST');
});

test('when a backing service is down, then the tool result is a service_unavailable error', async () => {
  await stack.service('knowledge').stop();
  const error = await toolError(client, 'search_knowledge_base', { query: 'password' });
  assert.equal(error.code, 'service_unavailable');
});
