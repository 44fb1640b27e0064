// End-to-end: observability. Every service runs as its own process on real MariaDB, Redis and
// NATS; the test exercises every public and admin operation (and MCP), then (a) scrapes the
// Prometheus endpoint of each process and checks the metrics the operations must have moved,
// and (b) reads every log line: no API key or admin token anywhere, each gateway request line
// carries its request id and, once authenticated, the organization.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { SAMPLE_KB } from '../support/kb.js';
import { scrapeMetrics } from '../support/pipeline.js';
import { Stack, api, waitFor } from '../support/stack.js';

const ORG = 'obs-main';
const LIMITED_ORG = 'obs-limited';
const REQUEST_ID = 'obs-req-0001';

let stack: Stack;
/** Every API key this test created (the secrets that must never reach a log). */
const secrets: string[] = [];
let key: string;

const KB = SAMPLE_KB.slice(0, 3);

const SERVICES = ['tickets', 'knowledge', 'answers', 'digest', 'gateway-0'];

before(async () => {
  stack = await Stack.onTestBackends('e2e-obs', {
    env: { DIGEST_LAG_POLL_MS: '500' },
  });
  secrets.push(stack.adminToken);
  key = await stack.orgWithKey(ORG);
  secrets.push(key);
});

after(() => stack?.stop());

/** Prometheus text → samples keyed by `name{labels}` exactly as exposed. */
const scrape = (name: string) => scrapeMetrics(stack.metricsUrl(name));

/** Sum of the samples of `metric` whose labels include all of `labels`. */
function total(samples: Map<string, number>, metric: string, labels: Record<string, string> = {}) {
  let sum = 0;
  let found = false;
  const want = Object.entries(labels).map(([k, v]) => `${k}="${v}"`);
  for (const [series, value] of samples) {
    const brace = series.indexOf('{');
    const name = brace < 0 ? series : series.slice(0, brace);
    if (name !== metric) continue;
    const have = brace < 0 ? [] : series.slice(brace + 1, -1).split(',');
    if (!want.every((w) => have.includes(w))) continue;
    found = true;
    sum += value;
  }
  return found ? sum : undefined;
}

function labelValues(samples: Map<string, number>, metric: string, label: string): Set<string> {
  const values = new Set<string>();
  const re = new RegExp(`${label}="([^"]*)"`);
  for (const series of samples.keys()) {
    if (!series.startsWith(`${metric}{`)) continue;
    const m = re.exec(series);
    if (m) values.add(m[1]!);
  }
  return values;
}

test('when every operation has run, then each service exposes its metrics and no secret reaches a log', async () => {
  const base = stack.baseUrl();
  const call = (method: string, path: string, options: Parameters<typeof api>[3] = {}) =>
    api(base, method, path, { key, ...options });

  // --- Admin API: orgs, settings, keys, KB import/count/delete, usage -------------------------
  await stack.admin('POST', '/admin/v1/orgs/obs-main/kb/entries', KB);
  const count = await stack.admin<{ count: number }>(
    'GET',
    '/admin/v1/orgs/obs-main/kb/entries/count',
  );
  assert.equal(count.count, KB.length);
  await stack.admin('POST', '/admin/v1/orgs/obs-main/kb/entries', [
    { id: 'tmp', question: 'Temporary?', answer: 'Yes.' },
  ]);
  await stack.admin('DELETE', '/admin/v1/orgs/obs-main/kb/entries/tmp');
  await stack.admin('GET', '/admin/v1/orgs');
  await stack.admin('GET', `/admin/v1/orgs/${ORG}/keys`);
  await stack.admin('GET', `/admin/v1/orgs/${ORG}/usage`);
  const readOnly = await stack.createKey(ORG, ['kb:read']);
  secrets.push(readOnly.key);
  const revoked = await stack.createKey(ORG);
  secrets.push(revoked.key);
  await stack.admin('DELETE', `/admin/v1/orgs/${ORG}/keys/${revoked.id}`);
  const limitedKey = await stack.orgWithKey(LIMITED_ORG, undefined, {
    rate_limit_per_key_per_min: 2,
  });
  secrets.push(limitedKey);

  // --- Public API, both prefixes ----------------------------------------------------------------
  assert.equal((await call('GET', '/api/v1/agent/kb/search?query=reset+password')).status, 200);
  assert.equal((await call('GET', '/api/agent/kb/search?query=invoice')).status, 200);
  assert.equal((await call('GET', '/api/v1/agent/faq')).status, 200);
  const created = await call('POST', '/api/v1/agent/tickets', {
    body: { content: 'How do I export tickets to CSV?' },
    headers: { 'idempotency-key': 'obs-idem-1', 'x-request-id': REQUEST_ID },
  });
  assert.equal(created.status, 201, created.text);
  const replay = await call('POST', '/api/v1/agent/tickets', {
    body: { content: 'How do I export tickets to CSV?' },
    headers: { 'idempotency-key': 'obs-idem-1' },
  });
  assert.equal(replay.json.ticket_id, created.json.ticket_id);
  assert.equal((await call('GET', '/api/v1/agent/tickets?limit=5')).status, 200);
  const answer = await call('POST', '/api/v1/agent/answers', {
    body: { question: 'How do I export tickets to CSV?' },
  });
  assert.equal(answer.status, 200, answer.text);
  assert.equal((await api(base, 'GET', '/api/v1/agent/openapi.json')).status, 200);
  const mcp = await call('POST', '/api/mcp', {
    headers: {
      accept: 'application/json, text/event-stream',
      'mcp-protocol-version': '2025-06-18',
    },
    body: {
      jsonrpc: '2.0',
      id: 1,
      method: 'tools/call',
      params: { name: 'search_knowledge_base', arguments: { query: 'invoices' } },
    },
  });
  assert.equal(mcp.status, 200, mcp.text);

  // --- Staff operations on the ticket, digest build -----------------------------------------
  const patched = await api(
    stack.adminUrl(),
    'PATCH',
    `/admin/v1/orgs/${ORG}/tickets/${created.json.ticket_id}`,
    {
      key: stack.adminToken,
      // Allowed from any status but closed, whatever the triage did meanwhile.
      body: { status: 'duplicate' },
    },
  );
  assert.equal(patched.status, 200, patched.text);
  await stack.admin('POST', `/admin/v1/orgs/${ORG}/digests`, {});

  // --- Failures: 401 (missing, unsupported scheme, invalid key), 403, 404, 429 ---------------
  assert.equal((await api(base, 'GET', '/api/v1/agent/faq')).status, 401);
  const basic = await api(base, 'GET', '/api/v1/agent/faq', {
    headers: { authorization: 'Basic dXNlcjpwYXNz' },
  });
  assert.equal(basic.status, 401);
  assert.equal((await call('GET', '/api/v1/agent/faq', { key: revoked.key })).status, 401);
  assert.equal((await call('GET', '/api/v1/agent/tickets', { key: readOnly.key })).status, 403);
  assert.equal((await call('GET', '/api/v1/agent/no/such/route/42')).status, 404);
  assert.equal(
    (await api(stack.adminUrl(), 'GET', '/admin/v1/orgs', { key: 'wrong-token-1234567890' }))
      .status,
    401,
  );
  const limited = [];
  for (let i = 0; i < 3; i++)
    limited.push(await call('GET', '/api/v1/agent/faq', { key: limitedKey }));
  assert.deepEqual(
    limited.map((r) => r.status),
    [200, 200, 429],
  );

  // --- The event pipeline: triage (answers) and aggregation (digest) consume the ticket event -
  await waitFor(
    async () => (total(await scrape('answers'), 'triage_events_total') ?? 0) >= 1,
    30_000,
    () => 'the ticket was not triaged',
  );
  await waitFor(
    async () => (total(await scrape('digest'), 'digest_events_processed_total') ?? 0) >= 1,
    30_000,
    () => 'the digest consumer applied no event',
  );

  // === (a) metrics ==============================================================================
  const gw = await scrape('gateway-0');
  const http = (route: string, method: string, status: string) =>
    total(gw, 'http_requests_total', { route, method, status });
  assert.ok(http('/api/v1/agent/kb/search', 'GET', '200')! >= 1);
  assert.ok(http('/api/agent/kb/search', 'GET', '200')! >= 1, 'the legacy prefix is its own route');
  assert.ok(http('/api/v1/agent/tickets', 'POST', '201')! >= 2);
  assert.ok(http('/api/v1/agent/tickets', 'GET', '200')! >= 1);
  assert.ok(http('/api/v1/agent/answers', 'POST', '200')! >= 1);
  assert.ok(http('/api/v1/agent/faq', 'GET', '401')! >= 3);
  assert.ok(http('/api/v1/agent/faq', 'GET', '429')! >= 1);
  assert.ok(http('/api/v1/agent/tickets', 'GET', '403')! >= 1);
  assert.ok(http('/api/mcp', 'POST', '200')! >= 1);
  assert.ok(http('unmatched', 'GET', '404')! >= 1);
  assert.ok(http('/admin/v1/orgs/:org/keys', 'POST', '201')! >= 2, 'admin routes are patterns');
  assert.ok(http('/admin/v1/orgs/:org/tickets/:id', 'PATCH', '200')! >= 1);
  assert.ok(http('/admin/v1/orgs', 'GET', '401')! >= 1);
  // Never a raw URL: no ids, org names, query strings or unknown paths as label values.
  for (const route of labelValues(gw, 'http_requests_total', 'route')) {
    assert.ok(!/obs-|\?|\d{2,}|no\/such/.test(route), `route label ${route}`);
  }
  assert.ok(total(gw, 'http_request_duration_seconds_count', { route: '/api/v1/agent/faq' })! >= 1);
  assert.ok(total(gw, 'http_request_duration_seconds_bucket', { le: '+Inf' })! >= 1);
  assert.equal(total(gw, 'rate_limit_rejections_total', { policy: 'key' }), 1);
  assert.equal(total(gw, 'rate_limit_rejections_total', { policy: 'org' }), 0);
  assert.equal(total(gw, 'rate_limit_rejections_total', { policy: 'authfail' }), 0);
  assert.ok(total(gw, 'auth_failures_total', { reason: 'missing' })! >= 1);
  assert.ok(total(gw, 'auth_failures_total', { reason: 'unsupported_scheme' })! >= 1);
  assert.ok(total(gw, 'auth_failures_total', { reason: 'invalid_key' })! >= 1);
  assert.ok(total(gw, 'auth_failures_total', { reason: 'insufficient_scope' })! >= 1);
  assert.ok(total(gw, 'auth_failures_total', { reason: 'invalid_admin_token' })! >= 1);
  assert.ok(
    total(gw, 'grpc_client_requests_total', {
      target: stack.addresses.TICKETS_ADDR!,
      method: 'CreateTicket',
      code: 'OK',
    })! >= 2,
  );
  assert.ok(total(gw, 'grpc_client_request_duration_seconds_count', { method: 'Search' })! >= 1);

  const tickets = await scrape('tickets');
  const ticketsRpc = { service: 'supportagent.tickets.v1.TicketsService' };
  assert.ok(
    total(tickets, 'grpc_server_requests_total', {
      ...ticketsRpc,
      method: 'CreateTicket',
      code: 'OK',
    })! >= 2,
  );
  assert.ok(
    total(tickets, 'grpc_server_requests_total', { ...ticketsRpc, method: 'ApplyTriage' })! >= 1,
  );
  assert.ok(total(tickets, 'grpc_server_request_duration_seconds_count', ticketsRpc)! >= 4);
  assert.ok(total(tickets, 'outbox_published_total')! >= 2, 'created + status_changed (+ triaged)');
  assert.equal(total(tickets, 'idempotent_replays_total'), 1);
  await waitFor(
    async () => total(await scrape('tickets'), 'outbox_backlog') === 0,
    15_000,
    () => 'outbox_backlog did not come down to 0',
  );

  const kb = await scrape('knowledge');
  assert.ok(total(kb, 'kb_search_duration_seconds_count')! >= 3);
  assert.ok(total(kb, 'kb_entries_upserted_total', { result: 'inserted' })! >= KB.length + 1);
  assert.ok(
    total(kb, 'grpc_server_requests_total', {
      service: 'supportagent.knowledge.v1.KnowledgeService',
      method: 'Search',
      code: 'OK',
    })! >= 3,
  );

  const answers = await scrape('answers');
  assert.ok(total(answers, 'deflections_committed_total')! >= 1, 'the covered question counted');
  assert.notEqual(total(answers, 'deflections_released_total'), undefined);
  assert.notEqual(total(answers, 'deflection_limit_rejections_total'), undefined);
  assert.ok(total(answers, 'triage_events_total')! >= 1);
  assert.ok(
    total(answers, 'grpc_server_requests_total', { method: 'GenerateAnswer', code: 'OK' })! >= 1,
  );
  // Lag is polled (every 5 s); -1 only until the first poll.
  await waitFor(
    async () => total(await scrape('answers'), 'triage_consumer_pending') === 0,
    15_000,
    () => 'triage_consumer_pending did not reach 0',
  );

  const digest = await scrape('digest');
  assert.ok(total(digest, 'digest_events_processed_total')! >= 1);
  assert.ok(total(digest, 'digest_builds_total', { trigger: 'manual' })! >= 1);
  assert.notEqual(total(digest, 'digest_events_duplicate_total'), undefined);
  assert.notEqual(total(digest, 'digest_events_redelivered_total'), undefined);
  await waitFor(
    async () => total(await scrape('digest'), 'digest_consumer_pending') === 0,
    15_000,
    () => 'digest_consumer_pending did not reach 0',
  );

  for (const name of SERVICES) {
    const samples = await scrape(name);
    assert.ok(total(samples, 'process_cpu_user_seconds_total')! > 0, `${name} process metrics`);
    assert.ok(total(samples, 'nodejs_heap_size_used_bytes')! > 0, `${name} heap`);
  }

  // === (b) logs =================================================================================
  await new Promise((r) => setTimeout(r, 200)); // let the last access-log lines be written
  const logs = stack.allLogs();
  for (const secret of secrets) {
    assert.ok(!logs.includes(secret), `a secret (${secret.slice(0, 8)}…) appears in the logs`);
  }
  const gatewayLines = stack.gateways[0]!.logs()
    .split('\n')
    .filter((l) => l.startsWith('{'))
    .map((l) => JSON.parse(l) as Record<string, any>);
  const requestLines = gatewayLines.filter((l) => l.req && l.res);
  assert.ok(requestLines.length >= 30, `${requestLines.length} request log lines`);
  for (const line of requestLines) {
    assert.equal(typeof line.reqId, 'string', JSON.stringify(line));
    assert.equal(line.req.id, line.reqId);
    assert.equal(line.req.headers, undefined, 'headers are not logged');
    const url: string = line.req.url;
    const status: number = line.res.statusCode;
    const authenticated =
      url.startsWith('/api/') && !url.endsWith('/openapi.json') && [200, 201, 403].includes(status);
    if (authenticated) {
      assert.ok(
        line.orgId === ORG || line.orgId === LIMITED_ORG,
        `no org id on ${line.req.method} ${url} ${status}`,
      );
      assert.equal(typeof line.keyId, 'string');
    }
    if (status === 401) assert.equal(line.orgId, undefined);
  }
  // The client's request id travels: the gateway's line and the tickets service's line.
  assert.ok(requestLines.some((l) => l.reqId === REQUEST_ID));
  const ticketLines = stack.tickets
    .logs()
    .split('\n')
    .filter((l) => l.startsWith('{'))
    .map((l) => JSON.parse(l) as Record<string, any>);
  assert.ok(
    ticketLines.some((l) => l.requestId === REQUEST_ID && l.msg === 'ticket created'),
    'tickets logged the gateway request id',
  );
});
