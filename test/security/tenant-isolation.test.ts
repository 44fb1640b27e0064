// Tenant isolation (issue 9.4). Several organizations get tickets, KB entries and a FAQ digest,
// every record carrying the organization's own marker word. A fast-check property then drives
// random requests of a random organization — REST and MCP, searches and questions naming other
// organizations' markers, filtered lists, full pagination walks, digests, another
// organization's cursor replayed, an idempotency key reused across organizations — and checks
// that no response to an organization contains another organization's marker, that ticket
// numbers are the organization's own 1, 2, 3… (so they say nothing of the others' volume),
// that replayed cursors are 400 invalid_cursor, and that one idempotency key in two
// organizations makes two tickets.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { mcpClient, mcpRpc, toolCall, type ToolResult } from '../support/mcp.js';
import { isoDate, queryRows, weekStartOf } from '../support/pipeline.js';
import { leakedSecrets } from '../support/secrets.js';
import { redisDatabase } from '../support/security.js';
import { ALL_SCOPES, Stack, api, waitFor } from '../support/stack.js';

const MARKERS = ['zephyrine', 'quillwort', 'marrowfat', 'obsidiax'];
const ORGS = MARKERS.map((_, i) => `iso-${i}`);
const N = ORGS.length;
const TOPICS = ['password', 'export', 'invoice', 'webhook', 'reset', 'csv', 'billing'];
const RUNS = 400;
const STATUSES = ['open', 'in_progress', 'resolved', 'closed', 'duplicate'];

let stack: Stack;
const keys: string[] = [];
const clients: Client[] = [];
/** Ticket numbers of each organization (every ticket is created by this suite). */
const ticketIds: Array<Set<number>> = ORGS.map(() => new Set());
/** (org, idempotency key) → ticket id. */
const idempotent = new Map<string, number>();
let checks = 0;
const byNumber = (a: number, b: number) => a - b;

const kbOf = (m: string) => [
  {
    id: 'pw',
    question: `How do I reset my ${m} password?`,
    answer: `Open ${m} Settings > Security and choose "Reset password".`,
  },
  {
    id: 'csv',
    question: `How do I export ${m} tickets to CSV?`,
    answer: `In the ${m} Tickets view choose Export > CSV.`,
  },
  {
    id: 'inv',
    question: `Where are my ${m} invoices?`,
    answer: `Invoices live under ${m} Billing > Invoices.`,
  },
];

const ticketTexts = (m: string) => [
  `I cannot reset my ${m} password`,
  `How do I export ${m} tickets to CSV?`,
  `The ${m} webhook fails with a timeout`,
  `Where can I download ${m} invoices?`,
];

before(async () => {
  stack = await Stack.onTestBackends('sec-iso', {
    redisUrl: redisDatabase(6),
    env: { DIGEST_SCHEDULER_ENABLED: 'false', DIGEST_METRICS_PORT: '0' },
  });
  for (const [i, org] of ORGS.entries()) {
    keys.push(
      await stack.orgWithKey(org, ALL_SCOPES, {
        rate_limit_per_key_per_min: 1_000_000,
        rate_limit_per_org_per_min: 1_000_000,
        deflection_monthly_limit: 1_000_000,
      }),
    );
    await stack.admin('POST', `/admin/v1/orgs/${org}/kb/entries`, kbOf(MARKERS[i]!));
    for (const content of ticketTexts(MARKERS[i]!)) {
      const res = await api(stack.baseUrl(), 'POST', '/api/v1/agent/tickets', {
        key: keys[i]!,
        body: { content },
      });
      assert.equal(res.status, 201, res.text);
      assert.equal(res.json.ticket_id, ticketIds[i]!.size + 1, `${org}'s next number`);
      ticketIds[i]!.add(res.json.ticket_id);
    }
    clients.push(await mcpClient(stack.baseUrl(), keys[i]!));
  }
  const week = isoDate(weekStartOf(new Date()));
  for (const [i, org] of ORGS.entries()) {
    await waitFor(
      async () => {
        const rows = await queryRows<{ n: number }>(
          stack.mysqlUrl,
          'SELECT ticket_count AS n FROM digest_weeks WHERE org_id = ? AND week_start = ?',
          [org, week],
        );
        return Number(rows[0]?.n ?? 0) >= ticketIds[i]!.size;
      },
      30_000,
      () => `digest has not counted ${org}'s tickets`,
      100,
    );
    await stack.admin('POST', `/admin/v1/orgs/${org}/digests`, { week_start: week });
  }
});

after(async () => {
  for (const c of clients) await c.close().catch(() => undefined);
  await stack?.stop();
});

/** No other organization's marker in a response to org `i`. */
function assertOwnOnly(i: number, text: string, what: string): void {
  checks++;
  for (const [j, m] of MARKERS.entries()) {
    if (j !== i)
      assert.ok(
        !text.includes(m),
        `${what}: ${ORGS[i]} saw ${ORGS[j]}'s data: ${text.slice(0, 500)}`,
      );
  }
}

/** Ticket numbers in a page are all numbers org `i` was given. */
function assertOwnTickets(i: number, tickets: Array<{ id: number }>, what: string): void {
  checks++;
  for (const t of tickets) {
    assert.ok(ticketIds[i]!.has(t.id), `${what}: ${ORGS[i]} saw ticket ${t.id} of another org`);
  }
}

const rest = (i: number, method: string, path: string, options: Parameters<typeof api>[3] = {}) =>
  api(stack.baseUrl(), method, `/api/v1/agent${path}`, { key: keys[i]!, ...options });

async function tool(i: number, name: string, args: Record<string, unknown>): Promise<ToolResult> {
  return (await clients[i]!.callTool({ name, arguments: args })) as ToolResult;
}

async function firstCursor(j: number): Promise<string> {
  const page = await rest(j, 'GET', '/tickets?limit=1');
  assert.equal(typeof page.json.next_cursor, 'string', page.text);
  return page.json.next_cursor as string;
}

type Action =
  | 'search'
  | 'answer'
  | 'list'
  | 'walk'
  | 'faq'
  | 'cursor-replay'
  | 'shared-idempotency-key'
  | 'mcp-search'
  | 'mcp-answer'
  | 'mcp-list'
  | 'mcp-faq'
  | 'mcp-cursor-replay'
  | 'mcp-shared-idempotency-key';

const ACTIONS: Action[] = [
  'search',
  'answer',
  'list',
  'walk',
  'faq',
  'cursor-replay',
  'shared-idempotency-key',
  'mcp-search',
  'mcp-answer',
  'mcp-list',
  'mcp-faq',
  'mcp-cursor-replay',
  'mcp-shared-idempotency-key',
];

interface Case {
  org: number;
  otherOffset: number;
  action: Action;
  words: string[];
  limit: number;
  status: string | null;
  idemKey: string;
}

const caseArb: fc.Arbitrary<Case> = fc.record({
  org: fc.nat({ max: N - 1 }),
  otherOffset: fc.integer({ min: 1, max: N - 1 }),
  action: fc.constantFrom(...ACTIONS),
  // Queries mix topic words with any organization's markers: asking about B's data as A.
  words: fc.array(fc.constantFrom(...TOPICS, ...MARKERS), { minLength: 1, maxLength: 6 }),
  limit: fc.integer({ min: 1, max: 20 }),
  status: fc.option(fc.constantFrom(...STATUSES), { nil: null }),
  idemKey: fc.stringMatching(/^[A-Za-z0-9._:-]{1,40}$/),
});

async function runCase(c: Case): Promise<void> {
  const i = c.org;
  const j = (i + c.otherOffset) % N;
  const query = c.words.join(' ');
  const where = `${c.action} as ${ORGS[i]}`;
  switch (c.action) {
    case 'search': {
      const res = await rest(
        i,
        'GET',
        `/kb/search?query=${encodeURIComponent(query)}&limit=${c.limit}`,
      );
      assert.equal(res.status, 200, res.text);
      assertOwnOnly(i, res.text, where);
      return;
    }
    case 'answer': {
      const res = await rest(i, 'POST', '/answers', { body: { question: query } });
      assert.equal(res.status, 200, res.text);
      assertOwnOnly(i, res.text, where);
      return;
    }
    case 'list': {
      const qs = `limit=${c.limit}${c.status ? `&status=${c.status}` : ''}`;
      const res = await rest(i, 'GET', `/tickets?${qs}`);
      assert.equal(res.status, 200, res.text);
      assertOwnOnly(i, res.text, where);
      assertOwnTickets(i, res.json.tickets, where);
      return;
    }
    case 'walk': {
      const seen = new Set<number>();
      let cursor: string | null = null;
      do {
        const res = await rest(
          i,
          'GET',
          `/tickets?limit=${c.limit}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`,
        );
        assert.equal(res.status, 200, res.text);
        assertOwnOnly(i, res.text, where);
        assertOwnTickets(i, res.json.tickets, where);
        for (const t of res.json.tickets as Array<{ id: number }>) seen.add(t.id);
        cursor = res.json.next_cursor;
      } while (cursor);
      assert.deepEqual(
        [...seen].sort(byNumber),
        [...ticketIds[i]!].sort(byNumber),
        `${where}: every own ticket once`,
      );
      return;
    }
    case 'faq': {
      const res = await rest(i, 'GET', '/faq');
      assert.equal(res.status, 200, res.text);
      assert.ok(res.text.includes(MARKERS[i]!), `${where}: own digest expected: ${res.text}`);
      assertOwnOnly(i, res.text, where);
      return;
    }
    case 'cursor-replay': {
      const cursor = await firstCursor(j);
      const res = await rest(i, 'GET', `/tickets?limit=1&cursor=${encodeURIComponent(cursor)}`);
      checks++;
      assert.equal(res.status, 400, `${where}: ${res.text}`);
      assert.equal(res.json.error.code, 'invalid_cursor');
      assertOwnOnly(i, res.text, where);
      return;
    }
    case 'shared-idempotency-key': {
      for (const org of [i, j]) {
        const res = await rest(org, 'POST', '/tickets', {
          body: { content: `${MARKERS[org]} shared key ticket` },
          headers: { 'idempotency-key': `"${c.idemKey}"` },
        });
        recordCreate(org, c.idemKey, res.status, res.json, where);
      }
      // Each was a first use in its organization (recordCreate): two tickets, whatever numbers.
      return;
    }
    case 'mcp-search': {
      const r = await tool(i, 'search_knowledge_base', { query, limit: c.limit });
      assert.notEqual(r.isError, true, JSON.stringify(r));
      assertOwnOnly(i, JSON.stringify(r), where);
      return;
    }
    case 'mcp-answer': {
      const r = await tool(i, 'generate_answer', { question: query });
      assert.notEqual(r.isError, true, JSON.stringify(r));
      assertOwnOnly(i, JSON.stringify(r), where);
      return;
    }
    case 'mcp-list': {
      const r = await tool(i, 'list_tickets', {
        limit: c.limit,
        ...(c.status ? { status: c.status } : {}),
      });
      assert.notEqual(r.isError, true, JSON.stringify(r));
      assertOwnOnly(i, JSON.stringify(r), where);
      assertOwnTickets(i, r.structuredContent!.tickets, where);
      return;
    }
    case 'mcp-faq': {
      const r = await tool(i, 'get_faq_digest', {});
      assert.notEqual(r.isError, true, JSON.stringify(r));
      assertOwnOnly(i, JSON.stringify(r), where);
      return;
    }
    case 'mcp-cursor-replay': {
      const cursor = await firstCursor(j);
      const res = await mcpRpc(stack.baseUrl(), toolCall('list_tickets', { limit: 1, cursor }), {
        key: keys[i]!,
      });
      checks++;
      assert.equal(res.status, 200, res.text);
      const result = res.json.result as ToolResult;
      assert.equal(result.isError, true, res.text);
      assert.equal(JSON.parse(result.content[0]!.text!).error.code, 'invalid_cursor');
      assertOwnOnly(i, res.text, where);
      return;
    }
    case 'mcp-shared-idempotency-key': {
      for (const org of [i, j]) {
        const r = await tool(org, 'create_ticket', {
          content: `${MARKERS[org]} shared key ticket`,
          idempotencyKey: c.idemKey,
        });
        assert.notEqual(r.isError, true, JSON.stringify(r));
        recordCreate(org, c.idemKey, 201, r.structuredContent, where);
      }
      return;
    }
  }
}

/**
 * Checks a creation against what this organization's key produced before: a first use gets the
 * organization's next number (other organizations' creates in between show nothing), a repeat
 * the number it got. Returns the number.
 */
function recordCreate(org: number, key: string, status: number, body: any, where: string): number {
  assert.equal(status, 201, JSON.stringify(body));
  const known = idempotent.get(`${org}\n${key}`);
  if (known === undefined) {
    assert.equal(body.duplicate, false, `${where}: first use of a key in ${ORGS[org]}`);
    assert.equal(body.ticket_id, ticketIds[org]!.size + 1, `${where}: ${ORGS[org]}'s next number`);
    idempotent.set(`${org}\n${key}`, body.ticket_id);
    ticketIds[org]!.add(body.ticket_id);
  } else {
    assert.deepEqual(body, { ticket_id: known, duplicate: true }, `${where}: replay`);
  }
  checks++;
  return body.ticket_id as number;
}

test('when organizations call every operation, replay cursors and reuse idempotency keys across each other, then no response carries another organization’s data', async () => {
  await fc.assert(fc.asyncProperty(caseArb, runCase), { numRuns: RUNS, ...propertySeed() });

  // Stored side: every ticket sits in the organization whose key created it.
  for (const [i, org] of ORGS.entries()) {
    const rows = await queryRows<{ number: number }>(
      stack.mysqlUrl,
      'SELECT number FROM tickets WHERE org_id = ?',
      [org],
    );
    assert.deepEqual(
      rows.map((r) => Number(r.number)).sort(byNumber),
      [...ticketIds[i]!].sort(byNumber),
      `tickets of ${org} in MySQL`,
    );
    checks++;
  }
  assert.deepEqual(leakedSecrets(stack.allLogs(), [...keys, stack.adminToken]), []);
  console.log(`isolation checks: ${checks} (${ORGS.length} organizations, ${RUNS} random cases)`);
});

/** FC_SEED=<n> reproduces a failing run; otherwise a fresh seed each run (printed on failure). */
function propertySeed(): { seed?: number } {
  const s = process.env.FC_SEED;
  return s === undefined ? {} : { seed: Number(s) };
}
