// Authorization matrix (issue 9.3): every operation — the five REST operations, the five MCP
// tools, and MCP initialize / tools/list — for every subset of the five scopes, with each kind
// of credential:
//
//   valid        a key of org A holding exactly that subset
//   revoked      a key of org A with that subset, revoked
//   malformed    that valid key bent out of shape (short, long, wrong prefix, …)
//   bad checksum that valid key with one character of its body changed
//   other org    a key of org B with that subset: B's data only, never A's
//
// Expected: 200/201 when the key holds the operation's scope (initialize and tools/list need
// any valid key), 403 insufficient_scope naming the scope otherwise, 401 invalid_token for
// every revoked, malformed or bad-checksum key. Bodies are tiny and valid so only
// authorization varies; rate limits and the failed-authentication throttle are raised. The
// empty subset cannot be issued (the admin API refuses a key without scopes).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { INITIALIZE, MCP_HEADERS, TOOL_SCOPES, toolCall, type McpTool } from '../support/mcp.js';
import { isoDate, queryRows, weekStartOf } from '../support/pipeline.js';
import { leakedSecrets } from '../support/secrets.js';
import {
  assertErrorBody,
  badChecksumKey,
  malformedKeys,
  redisDatabase,
  runPool,
  subsets,
} from '../support/security.js';
import { ALL_SCOPES, Stack, api, waitFor } from '../support/stack.js';

const ORG_A = 'authz-a';
const ORG_B = 'authz-b';
const MARK = { [ORG_A]: 'alphaquartz', [ORG_B]: 'betazircon' } as Record<string, string>;
const HIGH_LIMITS = {
  rate_limit_per_key_per_min: 1_000_000,
  rate_limit_per_org_per_min: 1_000_000,
  deflection_monthly_limit: 1_000_000,
};

const kbOf = (org: string) => [
  {
    id: 'pw',
    question: `How do I reset my ${MARK[org]} password?`,
    answer: `Open ${MARK[org]} Settings > Security and choose "Reset password".`,
  },
  {
    id: 'csv',
    question: `How do I export ${MARK[org]} tickets to CSV?`,
    answer: `In the ${MARK[org]} Tickets view choose Export > CSV.`,
  },
];

interface Operation {
  name: string;
  /** undefined: any valid key (MCP initialize, tools/list). */
  scope: string | undefined;
  surface: 'rest' | 'mcp';
  send(
    key: string,
    org: string,
    n: number,
  ): Promise<{ status: number; headers: Headers; text: string; json: any }>;
}

let stack: Stack;
const secrets: string[] = [];

const prefix = (n: number) => (n % 2 === 0 ? '/api/v1/agent' : '/api/agent');

function rest(
  name: string,
  scope: string,
  method: string,
  path: string,
  body?: (org: string) => unknown,
): Operation {
  return {
    name,
    scope,
    surface: 'rest',
    send: (key, org, n) =>
      api(stack.baseUrl(), method, `${prefix(n)}${path}`, {
        key,
        ...(body ? { body: body(org) } : {}),
      }),
  };
}

function mcp(
  name: string,
  scope: string | undefined,
  message: (org: string) => unknown,
): Operation {
  return {
    name,
    scope,
    surface: 'mcp',
    send: (key, org) =>
      api(stack.baseUrl(), 'POST', '/api/mcp', { key, body: message(org), headers: MCP_HEADERS }),
  };
}

const tool = (name: McpTool, args: (org: string) => Record<string, unknown>) =>
  mcp(`mcp ${name}`, TOOL_SCOPES[name], (org) => toolCall(name, args(org)));

const OPERATIONS: Operation[] = [
  rest('GET kb/search', 'kb:read', 'GET', '/kb/search?query=password&limit=5'),
  rest('GET faq', 'faq:read', 'GET', '/faq'),
  rest('GET tickets', 'tickets:read', 'GET', '/tickets?limit=5'),
  rest('POST tickets', 'tickets:write', 'POST', '/tickets', (org) => ({
    content: `authz probe ${MARK[org]}`,
  })),
  rest('POST answers', 'answers:write', 'POST', '/answers', (org) => ({
    question: `How do I reset my ${MARK[org]} password?`,
  })),
  tool('search_knowledge_base', () => ({ query: 'password', limit: 5 })),
  tool('get_faq_digest', () => ({})),
  tool('list_tickets', () => ({ limit: 5 })),
  tool('create_ticket', (org) => ({ content: `authz probe ${MARK[org]}` })),
  tool('generate_answer', (org) => ({ question: `How do I reset my ${MARK[org]} password?` })),
  mcp('mcp initialize', undefined, () => INITIALIZE),
  mcp('mcp tools/list', undefined, () => ({ jsonrpc: '2.0', id: 2, method: 'tools/list' })),
];

/** Operations whose success body must show the caller's own marker. */
const SHOWS_OWN_DATA = new Set([
  'GET kb/search',
  'GET faq',
  'GET tickets',
  'POST answers',
  'mcp search_knowledge_base',
  'mcp get_faq_digest',
  'mcp list_tickets',
  'mcp generate_answer',
]);

async function ticketCount(org: string): Promise<number> {
  const [row] = await queryRows<{ n: number }>(
    stack.mysqlUrl,
    'SELECT COUNT(*) AS n FROM tickets WHERE org_id = ?',
    [org],
  );
  return Number(row!.n);
}

before(async () => {
  stack = await Stack.onTestBackends('sec-authz', {
    redisUrl: redisDatabase(5),
    env: {
      AUTH_FAILURES_PER_MIN_PER_IP: '1000000',
      DIGEST_SCHEDULER_ENABLED: 'false',
      DIGEST_METRICS_PORT: '0',
    },
  });
  secrets.push(stack.adminToken);
  for (const org of [ORG_A, ORG_B]) {
    secrets.push(await stack.orgWithKey(org, ALL_SCOPES, HIGH_LIMITS));
    await stack.admin('POST', `/admin/v1/orgs/${org}/kb/entries`, kbOf(org));
    const res = await api(stack.baseUrl(), 'POST', '/api/v1/agent/tickets', {
      key: secrets.at(-1)!,
      body: { content: `How do I reset my ${MARK[org]} password?` },
    });
    assert.equal(res.status, 201, res.text);
  }
  // A digest per organization, so GET /faq has content that could leak.
  const week = isoDate(weekStartOf(new Date()));
  for (const org of [ORG_A, ORG_B]) {
    await waitFor(
      async () =>
        (
          await queryRows(
            stack.mysqlUrl,
            'SELECT 1 FROM digest_weeks WHERE org_id = ? AND ticket_count > 0',
            [org],
          )
        ).length > 0,
      30_000,
      () => `digest has not counted ${org}'s ticket`,
      100,
    );
    await stack.admin('POST', `/admin/v1/orgs/${org}/digests`, { week_start: week });
  }
});

after(() => stack?.stop());

type Variant = 'valid' | 'revoked' | 'malformed' | 'bad checksum' | 'other org';

interface Cell {
  variant: Variant;
  scopes: string[];
  key: string;
  org: string;
}

test('when every operation is called with every scope subset and every kind of key, then each answer is exactly the documented status', async () => {
  const all = subsets(ALL_SCOPES);
  // The empty subset: no key can hold it.
  const empty = await api(stack.adminUrl(), 'POST', `/admin/v1/orgs/${ORG_A}/keys`, {
    body: { name: 'none', scopes: [] },
    headers: { authorization: `Bearer ${stack.adminToken}` },
  });
  assert.equal(empty.status, 400, empty.text);
  assert.equal(empty.json.error.param, 'scopes');
  let checks = 1;

  const cells: Cell[] = [];
  for (const [i, scopes] of all.entries()) {
    if (scopes.length === 0) continue;
    const valid = await stack.createKey(ORG_A, scopes);
    const revoked = await stack.createKey(ORG_A, scopes);
    const other = await stack.createKey(ORG_B, scopes);
    await stack.admin('DELETE', `/admin/v1/orgs/${ORG_A}/keys/${revoked.id}`);
    secrets.push(valid.key, revoked.key, other.key);
    const bent = malformedKeys(valid.key);
    cells.push(
      { variant: 'valid', scopes, key: valid.key, org: ORG_A },
      { variant: 'revoked', scopes, key: revoked.key, org: ORG_A },
      { variant: 'malformed', scopes, key: bent[i % bent.length]!, org: ORG_A },
      { variant: 'bad checksum', scopes, key: badChecksumKey(valid.key), org: ORG_A },
      { variant: 'other org', scopes, key: other.key, org: ORG_B },
    );
  }
  const ticketsBefore: Record<string, number> = {
    [ORG_A]: await ticketCount(ORG_A),
    [ORG_B]: await ticketCount(ORG_B),
  };
  const created = { [ORG_A]: 0, [ORG_B]: 0 } as Record<string, number>;
  const failures: string[] = [];
  const byVariant = new Map<string, number>();

  const tasks = cells.flatMap((cell, c) =>
    OPERATIONS.map((op) => async () => {
      const res = await op.send(cell.key, cell.org, c);
      const where = `${op.name} [${cell.scopes.join(' ')}] ${cell.variant}`;
      try {
        checkCell(op, cell, res, where);
        if (op.name === 'POST tickets' && res.status === 201) created[cell.org]!++;
        if (op.name === 'mcp create_ticket' && res.status === 200) created[cell.org]!++;
      } catch (err) {
        failures.push(`${where}: ${(err as Error).message}`);
      }
      byVariant.set(cell.variant, (byVariant.get(cell.variant) ?? 0) + 1);
    }),
  );
  await runPool(tasks, 6);
  checks += tasks.length;
  assert.deepEqual(failures.slice(0, 15), [], `${failures.length} cells wrong`);

  // Refused requests wrote nothing; allowed creations wrote one ticket each, in their own org.
  for (const org of [ORG_A, ORG_B]) {
    assert.equal(await ticketCount(org), ticketsBefore[org]! + created[org]!, `tickets of ${org}`);
    checks++;
  }
  assert.deepEqual(leakedSecrets(stack.allLogs(), secrets), [], 'secrets in service logs');
  checks++;

  console.log(
    `authz matrix: ${checks} checks (${OPERATIONS.length} operations × ${cells.length / 5} scope ` +
      `subsets × 5 key kinds, ${[...byVariant].map(([v, n]) => `${v} ${n}`).join(', ')})`,
  );
});

function checkCell(
  op: Operation,
  cell: Cell,
  res: { status: number; headers: Headers; text: string; json: any },
  where: string,
): void {
  const allowed = op.scope === undefined || cell.scopes.includes(op.scope);
  if (
    cell.variant === 'revoked' ||
    cell.variant === 'malformed' ||
    cell.variant === 'bad checksum'
  ) {
    assert.equal(res.status, 401, res.text);
    assertErrorBody(res, where);
    assert.equal(res.json.error.code, 'unauthorized');
    assert.match(
      res.headers.get('www-authenticate') ?? '',
      /^Bearer realm="support-agent", .*error="invalid_token"/,
    );
    return;
  }
  if (!allowed) {
    assert.equal(res.status, 403, res.text);
    assertErrorBody(res, where);
    assert.equal(res.json.error.code, 'insufficient_scope');
    const challenge = res.headers.get('www-authenticate') ?? '';
    assert.ok(
      challenge.startsWith(
        `Bearer error="insufficient_scope", scope="${op.scope}", resource_metadata=`,
      ),
      challenge,
    );
    return;
  }
  const expected = op.name === 'POST tickets' ? 201 : 200;
  assert.equal(res.status, expected, res.text);
  assert.match(res.headers.get('content-type') ?? '', /^application\/json/);
  if (op.surface === 'mcp') {
    assert.equal(res.json.jsonrpc, '2.0');
    assert.ok(res.json.result, res.text);
    assert.notEqual(res.json.result.isError, true, res.text);
  }
  // The caller's organization's data only.
  const otherOrg = cell.org === ORG_A ? ORG_B : ORG_A;
  assert.ok(!res.text.includes(MARK[otherOrg]!), `${cell.org} got ${otherOrg}'s data: ${res.text}`);
  if (SHOWS_OWN_DATA.has(op.name)) {
    assert.ok(res.text.includes(MARK[cell.org]!), `${cell.org}'s own data missing: ${res.text}`);
  }
}
