// MCP through clients nobody here wrote: the MCP Inspector's CLI (@modelcontextprotocol/inspector
// from npm) and the official SDK client, against a full stack whose gateway has no
// PUBLIC_BASE_URL (so what it names comes from the address the client used). The Inspector lists
// and calls every tool with an API-key header; a read-only key sees only its tools; a wrong key
// ends in a clear authentication error, also when the client tries its OAuth login.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { freePort } from '../support/backends.js';
import { MCP_TOOLS } from '../support/mcp.js';
import {
  run,
  startClientStack,
  removeDir,
  userProject,
  type ClientStack,
  type RunResult,
} from './support/clients.js';

const READ_TOOLS = ['search_knowledge_base', 'get_faq_digest', 'list_tickets'];
const WRONG_KEY = 'sak_live_not_my_key';

let cs: ClientStack;
let project: string;

/** The Inspector's CLI on the MCP endpoint at `url`, one JSON document out (`--format json`). */
function inspector(
  url: string,
  key: string,
  args: string[],
  env: Record<string, string> = {},
): Promise<RunResult> {
  return run(
    'npx',
    [
      '@modelcontextprotocol/inspector',
      '--cli',
      url,
      '--transport',
      'http',
      '--header',
      `Authorization: Bearer ${key}`,
      '--format',
      'json',
      '-q',
      ...args,
    ],
    { cwd: project, env, timeoutMs: 90_000 },
  );
}

/** The JSON document the Inspector printed last (result on stdout, error envelope on stderr). */
function printed(result: RunResult): any {
  const line = result.output
    .trim()
    .split('\n')
    .reverse()
    .find((l) => l.startsWith('{'));
  assert.ok(line, `no JSON in:\n${result.output}`);
  return JSON.parse(line);
}

async function sdkClient(key: string): Promise<Client> {
  const client = new Client({ name: 'clients-suite', version: '1.0.0' });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(`${cs.url}/api/mcp`), {
      requestInit: { headers: { authorization: `Bearer ${key}` } },
    }),
  );
  return client;
}

before(async () => {
  cs = await startClientStack('mcp', { PUBLIC_BASE_URL: '' });
  project = userProject('mcp');
});

after(async () => {
  await cs?.stop();
  removeDir(project);
});

test('when the Inspector CLI lists tools with an all-scope key, then it sees all five', async () => {
  const res = await inspector(`${cs.url}/api/mcp`, cs.key, ['--method', 'tools/list']);
  assert.equal(res.code, 0, res.output);
  assert.deepEqual(
    printed(res).result.tools.map((t: { name: string }) => t.name),
    [...MCP_TOOLS],
  );
});

test('when the Inspector CLI calls every tool with the key, then each returns the REST body', async () => {
  const calls: Array<[string, string[], (body: any) => boolean]> = [
    ['search_knowledge_base', ['query=reset password', 'limit=2'], (b) => b.results.length > 0],
    ['get_faq_digest', [], (b) => b.week_start === null && b.content === null],
    ['create_ticket', ['content=Filed from the Inspector'], (b) => b.duplicate === false],
    ['list_tickets', ['limit=1'], (b) => b.tickets[0].content === 'Filed from the Inspector'],
    ['generate_answer', ['question=How do I export tickets to CSV?'], (b) => b.confidence >= 0],
  ];
  assert.deepEqual(calls.map(([name]) => name).sort(), [...MCP_TOOLS].sort());
  for (const [name, args, ok] of calls) {
    const res = await inspector(`${cs.url}/api/mcp`, cs.key, [
      '--method',
      'tools/call',
      '--tool-name',
      name,
      ...args.flatMap((a) => ['--tool-arg', a]),
    ]);
    assert.equal(res.code, 0, `${name}: ${res.output}`);
    const result = printed(res).result;
    assert.notEqual(result.isError, true, name);
    assert.ok(ok(result.structuredContent), `${name}: ${JSON.stringify(result)}`);
    assert.deepEqual(JSON.parse(result.content[0].text), result.structuredContent, name);
  }
});

test('when a read-only key is used, then tools/list shows its three tools and a write tool is refused with 403', async () => {
  const list = await inspector(`${cs.url}/api/mcp`, cs.readOnlyKey, ['--method', 'tools/list']);
  assert.equal(list.code, 0, list.output);
  assert.deepEqual(
    printed(list).result.tools.map((t: { name: string }) => t.name),
    READ_TOOLS,
  );
  const client = await sdkClient(cs.readOnlyKey);
  try {
    assert.deepEqual(
      (await client.listTools()).tools.map((t) => t.name),
      READ_TOOLS,
    );
    await assert.rejects(
      client.callTool({ name: 'create_ticket', arguments: { content: 'x' } }),
      (err: Error & { code?: number }) =>
        err.code === 403 && /insufficient_scope/.test(err.message),
    );
    await assert.rejects(
      client.callTool({ name: 'no_such_tool', arguments: {} }),
      (err: Error & { code?: number }) => err.code === -32602 && /no_such_tool/.test(err.message),
    );
  } finally {
    await client.close();
  }
});

test('when the key is wrong and OAuth is off (--stored-auth-only), then the Inspector prints the 401 body', async () => {
  const res = await inspector(`${cs.url}/api/mcp`, WRONG_KEY, [
    '--stored-auth-only',
    '--method',
    'tools/list',
  ]);
  assert.equal(res.code, 3, res.output);
  const error = printed(res).error;
  assert.equal(error.code, 'auth_required');
  assert.match(error.message, /invalid or revoked API key/);
});

test('when the key is wrong and the Inspector tries its OAuth login, then it stops at registration with the fix in the message, at any address', async () => {
  const port = new URL(cs.url).port;
  for (const host of ['127.0.0.1', 'localhost']) {
    // A port nothing listens on now (a fixed offset from the gateway's was once taken by
    // another suite's socket: EADDRINUSE instead of the registration error).
    const callback = `http://127.0.0.1:${await freePort()}/cb`;
    const res = await inspector(
      `http://${host}:${port}/api/mcp`,
      WRONG_KEY,
      ['--method', 'tools/list', '--callback-url', callback],
      { MCP_AUTO_OPEN_ENABLED: 'true' },
    );
    assert.equal(res.code, 1, res.output);
    const { message } = printed(res).error;
    // Before the fix: "Protected resource http://localhost:8080/api/mcp does not match expected …".
    assert.doesNotMatch(message, /does not match/);
    assert.match(message, /Dynamic Client Registration rejected \(HTTP 404\)/);
    assert.match(message, /no OAuth authorization server.*Authorization: Bearer <API key>/);
  }
});

test('when the SDK client connects with a wrong key, then it fails with 401 and the API error body', async () => {
  await assert.rejects(sdkClient(WRONG_KEY), (err: Error & { code?: number }) => {
    assert.equal(err.code, 401);
    assert.match(err.message, /"code":"unauthorized"/);
    return true;
  });
});
