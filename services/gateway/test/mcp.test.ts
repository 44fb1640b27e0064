// Component tests of POST /api/mcp with canned gRPC upstreams: tools give the REST bodies and the
// REST error codes (as tool errors), HTTP-level checks (origin, key, scope, rate limit, body)
// answer like the REST routes. The end-to-end suite runs the same surface on real services.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ConfigError } from '@support-agent/shared';
import { createTestDatabase } from '../../../test/support/mysql.js';
import { INITIALIZE, toolCall } from '../../../test/support/mcp.js';
import { loadGatewayConfig } from '../src/config.js';
import { startFakeUpstreams, type FakeUpstreams } from './support/fake-upstreams.js';
import {
  orgWithKey,
  request,
  requireEnv,
  startGateway,
  TEST_BASE_URL,
  type TestGateway,
} from './support/gateway.js';

const MCP_METADATA = `${TEST_BASE_URL}/.well-known/oauth-protected-resource/api/mcp`;

let db: Awaited<ReturnType<typeof createTestDatabase>>;
let upstreams: FakeUpstreams;
let gw: TestGateway;
let down: TestGateway;
let key: string;
let orgId: string;
const clients: Client[] = [];

async function connect(base: string, k: string): Promise<Client> {
  const client = new Client({ name: 'gateway-test', version: '1.0.0' });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(`${base}/api/mcp`), {
      requestInit: { headers: { authorization: `Bearer ${k}` } },
    }),
  );
  clients.push(client);
  return client;
}

function rpc(base: string, body: unknown, k?: string, headers: Record<string, string> = {}) {
  return request(`${base}/api/mcp`, {
    method: 'POST',
    ...(k ? { key: k } : {}),
    headers: {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'mcp-protocol-version': '2025-06-18',
      ...headers,
    },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
}

const call = (name: string, args: Record<string, unknown>, id = 1) => toolCall(name, args, id);

async function tool(client: Client, name: string, args: Record<string, unknown>) {
  return (await client.callTool({ name, arguments: args })) as {
    isError?: boolean;
    structuredContent?: Record<string, unknown>;
    content: Array<{ type: string; text: string }>;
  };
}

before(async () => {
  db = await createTestDatabase('gwmcp');
  upstreams = await startFakeUpstreams();
  const env = { MYSQL_URL: db.url, REDIS_URL: requireEnv('TEST_REDIS_URL') };
  gw = await startGateway({
    ...env,
    UPSTREAM: upstreams.address,
    MCP_ALLOWED_ORIGINS: 'https://app.example.test, http://localhost:3000/',
  });
  down = await startGateway({ ...env, UPSTREAM: '127.0.0.1:1', GRPC_DEADLINE_MS: '500' });
  ({ key, orgId } = await orgWithKey(gw));
});

after(async () => {
  for (const c of clients) await c.close().catch(() => undefined);
  await gw?.stop();
  await down?.stop();
  await upstreams?.stop();
  await db?.drop();
});

describe('tools', () => {
  it('when each tool is called, then its structured content and text are the REST body', async () => {
    upstreams.digests.set(orgId, {
      orgId,
      weekStart: '2026-11-09',
      weekEnd: '2026-11-15',
      ticketCount: 3,
      content: '# FAQ\n',
      generatedAt: '2026-11-16T06:00:00.000Z',
    });
    const client = await connect(gw.base, key);
    const cases: Array<[string, Record<string, unknown>, string, string, unknown?]> = [
      [
        'search_knowledge_base',
        { query: 'reset', limit: 1 },
        'GET',
        '/kb/search?query=reset&limit=1',
      ],
      ['get_faq_digest', {}, 'GET', '/faq'],
      ['list_tickets', { status: 'open', limit: 2 }, 'GET', '/tickets?status=open&limit=2'],
      ['list_tickets', { cursor: 'c1' }, 'GET', '/tickets?cursor=c1'],
      [
        'generate_answer',
        { question: 'with sources' },
        'POST',
        '/answers',
        { question: 'with sources' },
      ],
      [
        'create_ticket',
        { content: 'x', idempotencyKey: 'm-1' },
        'POST',
        '/tickets',
        { content: 'x', idempotencyKey: 'm-1' },
      ],
    ];
    for (const [name, args, method, path, body] of cases) {
      const result = await tool(client, name, args);
      const rest = await request(`${gw.base}/api/v1/agent${path}`, { method, key, body });
      assert.notEqual(result.isError, true, result.content[0]?.text);
      const expected = name === 'create_ticket' ? { ...rest.json, duplicate: false } : rest.json;
      assert.deepEqual(result.structuredContent, expected, name);
      assert.deepEqual(JSON.parse(result.content[0]!.text), result.structuredContent);
    }
    // The REST call above replayed the MCP call's idempotency key.
    assert.equal(upstreams.calls.createTicket.at(-1)?.idempotencyKey, 'm-1');
    const last = upstreams.calls.generateAnswer.at(-1)!;
    assert.deepEqual(last.policy, { deflectionMonthlyLimit: 1000, highConfidenceThreshold: 85 });
  });

  it('when inputs are invalid, then the tool error carries the REST code and param, and no upstream is called', async () => {
    const client = await connect(gw.base, key);
    const before = upstreams.totalCalls();
    const cases: Array<[string, Record<string, unknown>, string]> = [
      ['search_knowledge_base', { query: '😀'.repeat(2001) }, 'query'],
      ['search_knowledge_base', { query: 'x', limit: 1.5 }, 'limit'],
      ['list_tickets', { priority: 'urgent' }, 'priority'],
      ['list_tickets', { limit: 21 }, 'limit'],
      ['create_ticket', { content: ' ' }, 'content'],
      ['create_ticket', { content: 'x', authorName: 'a'.repeat(201) }, 'authorName'],
      ['generate_answer', { question: ['a'] }, 'question'],
    ];
    for (const [name, args, param] of cases) {
      const result = await tool(client, name, args);
      assert.equal(result.isError, true, name);
      assert.equal(result.structuredContent, undefined);
      const body = JSON.parse(result.content[0]!.text);
      assert.equal(body.error.code, 'invalid_request');
      assert.equal(body.error.param, param, name);
    }
    assert.equal(upstreams.totalCalls(), before);
    const cursor = await tool(client, 'list_tickets', { cursor: 'forged' });
    assert.equal(JSON.parse(cursor.content[0]!.text).error.code, 'invalid_cursor');
  });

  it('when a tool that does not exist is called, then JSON-RPC error -32602 naming it, and nothing runs', async () => {
    const before = upstreams.totalCalls();
    const res = await rpc(gw.base, call('delete_everything', {}, 9), key);
    assert.equal(res.status, 200);
    assert.equal(res.json.id, 9);
    assert.equal(res.json.result, undefined);
    assert.equal(res.json.error.code, -32602);
    assert.match(res.json.error.message, /delete_everything/);
    const client = await connect(gw.base, key);
    await assert.rejects(
      client.callTool({ name: 'delete_everything', arguments: {} }),
      (err: Error & { code?: number }) => err.code === -32602,
    );
    assert.equal(upstreams.totalCalls(), before);
  });

  it('when a key holds some scopes, then tools/list shows exactly the tools they allow, in document order', async () => {
    const { key: some } = await orgWithKey(gw, ['tickets:write', 'faq:read']);
    const client = await connect(gw.base, some);
    const { tools } = await client.listTools();
    assert.deepEqual(
      tools.map((t) => t.name),
      ['get_faq_digest', 'create_ticket'],
    );
    const all = await (await connect(gw.base, key)).listTools();
    assert.equal(all.tools.length, 5);
    for (const t of all.tools) {
      assert.equal(t.inputSchema.type, 'object', t.name);
      assert.equal(t.outputSchema?.type, 'object', t.name);
    }
  });

  it('when the deflection limit is reached upstream, then generate_answer is a deflection_limit_reached tool error', async () => {
    const client = await connect(gw.base, key);
    const result = await tool(client, 'generate_answer', { question: 'over the limit' });
    assert.equal(result.isError, true);
    assert.equal(JSON.parse(result.content[0]!.text).error.code, 'deflection_limit_reached');
  });

  it('when every backing service is down, then every tool is a service_unavailable tool error', async () => {
    const { key: k } = await orgWithKey(down);
    const client = await connect(down.base, k);
    for (const [name, args] of [
      ['search_knowledge_base', { query: 'x' }],
      ['get_faq_digest', {}],
      ['list_tickets', {}],
      ['create_ticket', { content: 'x' }],
      ['generate_answer', { question: 'x' }],
    ] as const) {
      const result = await tool(client, name, args);
      assert.equal(result.isError, true, name);
      assert.equal(JSON.parse(result.content[0]!.text).error.code, 'service_unavailable', name);
    }
  });
});

describe('HTTP checks', () => {
  it('when a batch holds a tools/call the key may not make, then 403 with the MCP challenge', async () => {
    const { key: kbOnly } = await orgWithKey(gw, ['kb:read']);
    const res = await rpc(
      gw.base,
      [
        call('search_knowledge_base', { query: 'x' }, 1),
        call('create_ticket', { content: 'x' }, 2),
      ],
      kbOnly,
    );
    assert.equal(res.status, 403);
    assert.equal(res.json.error.code, 'insufficient_scope');
    assert.equal(
      res.headers.get('www-authenticate'),
      `Bearer error="insufficient_scope", scope="tickets:write", resource_metadata="${MCP_METADATA}"`,
    );
    const list = await rpc(gw.base, { jsonrpc: '2.0', id: 1, method: 'tools/list' }, kbOnly);
    assert.equal(list.status, 200);
    assert.deepEqual(
      list.json.result.tools.map((t: { name: string }) => t.name),
      ['search_knowledge_base'],
      'tools/list shows the tools the key may call',
    );
  });

  it('when no key is sent, then 401 with the MCP resource metadata, before any body is read', async () => {
    const res = await rpc(gw.base, '{not json');
    assert.equal(res.status, 401);
    assert.equal(
      res.headers.get('www-authenticate'),
      `Bearer realm="support-agent", resource_metadata="${MCP_METADATA}"`,
    );
  });

  it('when the body is malformed, empty or too large, then a JSON-RPC parse error or 413', async () => {
    for (const body of ['{not json', '']) {
      const res = await rpc(gw.base, body, key);
      assert.equal(res.status, 400);
      assert.equal(res.json.jsonrpc, '2.0');
      assert.equal(res.json.error.code, -32700);
      assert.ok(res.headers.get('ratelimit'), 'counted');
    }
    const big = JSON.stringify(call('search_knowledge_base', { query: 'x'.repeat(70_000) }));
    const res = await rpc(gw.base, big, key);
    assert.equal(res.status, 413);
    assert.equal(res.json.error.code, 'payload_too_large');
  });

  it('when the Origin is listed (normalized), then it passes; any other is 403 before authentication', async () => {
    const init = INITIALIZE;
    for (const origin of ['https://app.example.test', 'http://localhost:3000']) {
      const res = await rpc(gw.base, init, key, { origin });
      assert.equal(res.status, 200, origin);
    }
    for (const origin of ['https://app.example.test.evil', 'http://localhost:3001']) {
      const res = await rpc(gw.base, init, undefined, { origin });
      assert.equal(res.status, 403, origin);
      assert.equal(res.json.error.code, 'origin_not_allowed');
    }
    const other = await rpc(down.base, init, undefined, { origin: 'https://app.example.test' });
    assert.equal(other.status, 403, 'no origin is allowed by default');
  });

  it('when the rate limit is used up, then a lone tools/call is a tool error and other requests 429', async () => {
    const { key: k } = await orgWithKey(gw, undefined, { rate_limit_per_key_per_min: 1 });
    const ok = await rpc(gw.base, { jsonrpc: '2.0', id: 1, method: 'tools/list' }, k);
    assert.equal(ok.status, 200);
    assert.match(ok.headers.get('ratelimit') ?? '', /^"key";r=0;t=\d+$/);
    const before = upstreams.totalCalls();
    const limited = await rpc(gw.base, call('search_knowledge_base', { query: 'x' }), k);
    assert.equal(limited.status, 200);
    assert.equal(limited.json.result.isError, true);
    assert.equal(JSON.parse(limited.json.result.content[0].text).error.code, 'rate_limited');
    assert.equal(upstreams.totalCalls(), before, 'nothing ran');
    for (const body of [
      { jsonrpc: '2.0', id: 2, method: 'tools/list' },
      [call('search_knowledge_base', { query: 'x' }, 3)],
    ]) {
      const res = await rpc(gw.base, body, k);
      assert.equal(res.status, 429);
      assert.equal(res.json.error.code, 'rate_limited');
      assert.ok(Number(res.headers.get('retry-after')) >= 1);
    }
  });

  it('when MCP_ALLOWED_ORIGINS holds something that is not an origin, then the config is refused', () => {
    assert.deepEqual(
      loadGatewayConfig({ EMBEDDED: 'true', MCP_ALLOWED_ORIGINS: ' https://A.example , ' })
        .MCP_ALLOWED_ORIGINS,
      ['https://a.example'],
    );
    assert.deepEqual(loadGatewayConfig({ EMBEDDED: 'true' }).MCP_ALLOWED_ORIGINS, []);
    for (const bad of ['*', 'https://a.example/path', 'ftp://a.example', 'a.example']) {
      assert.throws(
        () => loadGatewayConfig({ EMBEDDED: 'true', MCP_ALLOWED_ORIGINS: bad }),
        ConfigError,
        bad,
      );
    }
  });
});
