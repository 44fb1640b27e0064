// End-to-end: the weekly FAQ digest built from ticket events. Tickets created through the
// gateway travel tickets → outbox → JetStream → digest (durable consumer, exactly once), and
// the digest is read back through GET /faq. Every service is its own process; NATS is this
// test's own so it can be stopped.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readStream } from '../support/events.js';
import {
  addDays,
  consumerBacklog,
  createdEnvelope,
  isoDate,
  publishEvents,
  queryRows,
  scrapeMetric,
  waitForConsumer,
  weekStartOf,
} from '../support/pipeline.js';
import { SAMPLE_KB } from '../support/kb.js';
import { Stack, api, waitFor } from '../support/stack.js';

const CONSUMER = 'digest-aggregator';

let stack: Stack;
let metricsPort: number;
let keyA: string;

const KB = SAMPLE_KB.slice(0, 2);

// StackFAQ-style: one intent, asked several ways.
const PASSWORD = [
  'How do I reset my password?',
  'I forgot my password, how can I reset it?',
  'Password reset: where do I change a forgotten password?',
  'How can I reset the password of my account?',
];
const CSV = [
  'How do I export tickets to CSV?',
  'Can I export my tickets as a CSV file?',
  'Export all tickets to CSV for a spreadsheet',
];
const UNRELATED = [
  'Do you offer a discount for nonprofit organizations?',
  'The mobile app crashes when I rotate my phone.',
];
const ORG_B_QUESTION = 'Zebrafish aquarium heater keeps tripping the breaker';

/** The public body's fields, in order (DESIGN.md §3). */
const PUBLIC_FIELDS = ['message', 'week_start', 'week_end', 'ticket_count', 'content'];

const EMPTY_BODY =
  '{"message":"No FAQ digest has been generated yet.","week_start":null,"week_end":null,"ticket_count":0,"content":null}';

before(async () => {
  stack = await Stack.onTestBackends('e2e-digest', {
    // The weekly schedule is exercised by its own test, with two replicas.
    // An event in hand when the digest is killed comes back after the ack wait: keep it short.
    env: {
      DIGEST_SCHEDULER_ENABLED: 'false',
      DIGEST_ACK_WAIT_MS: '2000',
      TRIAGE_ACK_WAIT_MS: '2000',
    },
  });
  // The stack gives every process a METRICS_PORT of its own.
  metricsPort = stack.metricsPorts.get('digest')!;
  keyA = await stack.orgWithKey('dg-a');
  await stack.admin('POST', '/admin/v1/orgs/dg-a/kb/entries', KB);
});

after(() => stack?.stop());

const thisWeek = () => isoDate(weekStartOf(new Date()));

async function createTickets(key: string, texts: string[]): Promise<number[]> {
  const ids: number[] = [];
  for (const content of texts) {
    const res = await api(stack.baseUrl(), 'POST', '/api/v1/agent/tickets', {
      key,
      body: { content },
    });
    assert.equal(res.status, 201, res.text);
    ids.push(res.json.ticket_id);
  }
  return ids;
}

interface BuiltDigest {
  org_id: string;
  week_start: string;
  week_end: string;
  ticket_count: number;
  content: string;
}

const build = (org: string, weekStart = thisWeek()) =>
  stack.admin<BuiltDigest>('POST', `/admin/v1/orgs/${org}/digests`, { week_start: weekStart });

/** The tickets of an org and week the digest has counted (its own table). */
async function countedTickets(org: string, weekStart = thisWeek()): Promise<number> {
  const rows = await queryRows<{ ticket_count: number }>(
    stack.mysqlUrl,
    'SELECT ticket_count FROM digest_weeks WHERE org_id = ? AND week_start = ?',
    [org, weekStart],
  );
  return rows[0]?.ticket_count ?? 0;
}

/** Waits until the tickets outbox has published everything and the digest consumer settled it. */
async function waitForDigestToCatchUp(org: string, expected: number): Promise<void> {
  await waitFor(
    async () => (await countedTickets(org)) >= expected,
    30_000,
    () => `digest counted fewer than ${expected} tickets of ${org}`,
    100,
  );
  await waitForConsumer(stack.nats.url, CONSUMER);
}

const faq = (key: string, prefix = '/api/v1/agent') =>
  api(stack.baseUrl(), 'GET', `${prefix}/faq`, { key });

/** The "### n. label (k tickets asked)" headings of a digest: label → size. */
function topics(markdown: string): Map<string, number> {
  const out = new Map<string, number>();
  for (const m of markdown.matchAll(/^### \d+\. (.+) \((\d+) tickets? asked\)$/gm)) {
    out.set(m[1]!, Number(m[2]));
  }
  return out;
}

test('when no digest has been built, then GET /faq is 200 with exactly the empty body on both prefixes', async () => {
  const v1 = await faq(keyA);
  const plain = await faq(keyA, '/api/agent');
  assert.equal(v1.status, 200);
  assert.equal(plain.status, 200);
  assert.equal(v1.text, EMPTY_BODY);
  assert.equal(plain.text, EMPTY_BODY);
  assert.match(v1.headers.get('content-type') ?? '', /^application\/json/);
});

test('when the key lacks faq:read, then 403 insufficient_scope naming faq:read', async () => {
  const key = await stack.keyFor('dg-a', ['kb:read', 'tickets:read', 'tickets:write']);
  const res = await faq(key);
  assert.equal(res.status, 403);
  assert.equal(res.json.error.code, 'insufficient_scope');
  assert.match(res.headers.get('www-authenticate') ?? '', /error="insufficient_scope"/);
  assert.match(res.headers.get('www-authenticate') ?? '', /scope="faq:read"/);
});

test("when a week's tickets are built into a digest, then GET /faq returns it with the exact count and paraphrases grouped into topics", async () => {
  const keyB = await stack.orgWithKey('dg-b');
  await createTickets(keyA, [...PASSWORD.slice(0, 2), CSV[0]!, UNRELATED[0]!]);
  await createTickets(keyB, [ORG_B_QUESTION, PASSWORD[0]!]);
  await createTickets(keyA, [...PASSWORD.slice(2), ...CSV.slice(1), UNRELATED[1]!]);
  await waitForDigestToCatchUp('dg-a', 9);
  await waitForDigestToCatchUp('dg-b', 2);

  const weekStart = thisWeek();
  const weekEnd = isoDate(addDays(weekStartOf(new Date()), 6));
  const built = await build('dg-a');
  assert.equal(built.week_start, weekStart);
  assert.equal(built.ticket_count, 9);

  const res = await faq(keyA);
  assert.equal(res.status, 200, res.text);
  assert.deepEqual(Object.keys(res.json), PUBLIC_FIELDS);
  assert.equal(res.json.message, `FAQ digest for ${weekStart} to ${weekEnd}`);
  assert.equal(res.json.week_start, weekStart);
  assert.equal(res.json.week_end, weekEnd);
  assert.equal(new Date(`${weekStart}T00:00:00Z`).getUTCDay(), 1, 'week_start is a Monday');
  assert.equal(new Date(`${weekEnd}T00:00:00Z`).getUTCDay(), 0, 'week_end is a Sunday');
  assert.equal(res.json.ticket_count, 9);
  const content = res.json.content as string;
  assert.equal(content, built.content);
  assert.match(content, /\*\*Total tickets: 9\*\*/);

  const found = topics(content);
  const sizes = [...found.values()].sort((a, b) => b - a);
  assert.deepEqual(sizes, [4, 3, 1, 1], `topics: ${JSON.stringify([...found])}`);
  const [passwordTopic] = [...found].find(([, n]) => n === 4)!;
  const [csvTopic] = [...found].find(([, n]) => n === 3)!;
  assert.ok(
    PASSWORD.includes(passwordTopic),
    `4-ticket topic is a password question: ${passwordTopic}`,
  );
  assert.ok(CSV.includes(csvTopic), `3-ticket topic is a CSV question: ${csvTopic}`);
  // The KB answers both big topics.
  assert.ok(content.includes('Reset password'), 'the password topic quotes its KB entry');
  assert.ok(content.includes('Export \\> CSV') || content.includes('Export > CSV'));

  // Org isolation: B's questions are never in A's digest, and A's never in B's.
  assert.ok(!content.includes('Zebrafish'));
  const b = await build('dg-b');
  assert.equal(b.ticket_count, 2);
  assert.ok(b.content.includes('Zebrafish'));
  for (const q of [...CSV, ...UNRELATED, ...PASSWORD.slice(1)]) assert.ok(!b.content.includes(q));
  assert.equal((await faq(keyA)).text, res.text, "building B's digest leaves A's alone");

  const plain = await faq(keyA, '/api/agent');
  assert.equal(plain.text, res.text, 'both prefixes are byte-identical');
});

test("when a second week is built after the first, then the digest leads with what changed: new and rising topics with both weeks' counts, in Markdown and in the admin JSON", async () => {
  const org = 'dg-trend';
  const key = await stack.orgWithKey(org);
  await stack.admin('POST', `/admin/v1/orgs/${org}/kb/entries`, KB);
  // Last week: two password tickets and an unrelated one, as the outbox wrote them then.
  const lastMonday = addDays(weekStartOf(new Date()), -7);
  const lastWeek = isoDate(lastMonday);
  const earlier = [PASSWORD[1]!, PASSWORD[3]!, UNRELATED[0]!].map((q, i) =>
    createdEnvelope(org, 4_000_000 + i, q, new Date(lastMonday.getTime() + 86_400_000 * (i + 1))),
  );
  await publishEvents(stack.nats.url, earlier);
  await waitFor(
    async () => (await countedTickets(org, lastWeek)) === earlier.length,
    30_000,
    () => `last week's tickets of ${org} not counted`,
  );
  const first = await build(org, lastWeek);
  assert.equal(first.ticket_count, 3);

  // This week, through the API: the password question twice as often, CSV export for the first time.
  await createTickets(key, [...PASSWORD, ...CSV]);
  await waitForDigestToCatchUp(org, PASSWORD.length + CSV.length);
  const built = await build(org);

  type Topic = {
    id: string;
    title: string;
    answered: boolean;
    tickets: number;
    last_week_tickets: number;
    trend: string | null;
    answer: { kind: string; kb_entry_id: string | null } | null;
    ticket_ids: number[];
  };
  const summary = (
    built as BuiltDigest & { summary: { last_week_ticket_count: number; topics: Topic[] } }
  ).summary;
  assert.equal(summary.last_week_ticket_count, 3);
  const byId = new Map(summary.topics.map((t) => [t.id, t]));
  const pw = byId.get('kb:pw-reset');
  const csv = byId.get('kb:export-csv');
  assert.ok(pw && csv, JSON.stringify(summary.topics.map((t) => [t.id, t.title])));
  assert.deepEqual(
    [pw.title, pw.tickets, pw.last_week_tickets, pw.trend, pw.answer?.kb_entry_id],
    ['How do I reset my password?', 4, 2, 'rising', 'pw-reset'],
  );
  assert.deepEqual(
    [csv.title, csv.tickets, csv.last_week_tickets, csv.trend],
    ['How do I export tickets to CSV?', 3, 0, 'new'],
  );
  assert.equal(pw.ticket_ids.length, 4);
  assert.equal(summary.topics.length, 2, 'nothing of last week that did not come back');

  const md = built.content;
  const changed = md.slice(md.indexOf('## What changed'), md.indexOf('## Top topics'));
  assert.ok(md.indexOf('## What changed') > 0, md);
  assert.match(changed, /\*\*New:\*\* How do I export tickets to CSV\? \(3 tickets\)/);
  assert.match(changed, /\*\*Rising:\*\* How do I reset my password\? \(4 tickets, last week 2\)/);
  assert.match(md, /\*\*Total tickets: 7\*\* \(7 tickets in 2 topics; last week 3 \(\+4\)\)/);

  // Admins read the same back; the public response keeps its shape, with the Markdown.
  assert.deepEqual(await stack.admin('GET', `/admin/v1/orgs/${org}/digests/latest`), built);
  const res = await faq(key);
  assert.deepEqual(Object.keys(res.json), PUBLIC_FIELDS);
  assert.equal(res.json.content, md);
});

test('when NATS is down while tickets are created, then after it returns the digest counts every ticket exactly once, and duplicates change nothing', async () => {
  const org = 'dg-outage';
  const key = await stack.orgWithKey(org);
  await stack.nats.stop();
  const texts = Array.from(
    { length: 12 },
    (_, i) => `Outage question number ${i}: where is my order?`,
  );
  const ids: number[] = [];
  for (const [i, content] of texts.entries()) {
    const res = await api(stack.baseUrl(), 'POST', '/api/v1/agent/tickets', {
      key,
      body: { content },
      headers: { 'Idempotency-Key': `outage-${i}` },
    });
    assert.equal(res.status, 201, 'creating tickets does not need NATS');
    ids.push(res.json.ticket_id);
  }
  // A client retrying while NATS is down creates nothing new.
  const retry = await api(stack.baseUrl(), 'POST', '/api/v1/agent/tickets', {
    key,
    body: { content: 'retry' },
    headers: { 'Idempotency-Key': 'outage-0' },
  });
  assert.equal(retry.json.duplicate, true);
  assert.equal(await countedTickets(org), 0);
  await stack.nats.restart();
  await waitForDigestToCatchUp(org, 12);
  assert.equal((await build(org)).ticket_count, 12);

  // The events once more: with the same Nats-Msg-Id JetStream drops them; under another
  // message id (a republish after the duplicate window) the consumer sees and skips them.
  const created = (await readStream(stack.nats.url))
    .filter((m) => m.event.org_id === org && m.event.type === 'tickets.created')
    .map((m) => m.event);
  assert.deepEqual(created.map((e) => e.ticket_number).sort(), [...ids].sort());
  const duplicatesBefore = await scrapeMetric(metricsPort, 'digest_events_duplicate_total');
  assert.equal((await publishEvents(stack.nats.url, created)).duplicates, created.length);
  await publishEvents(stack.nats.url, created, (e) => `${e.id}#replay`);
  await waitForConsumer(stack.nats.url, CONSUMER);
  assert.equal(
    (await scrapeMetric(metricsPort, 'digest_events_duplicate_total')) - duplicatesBefore,
    created.length,
    'the consumer saw every republished event and recognised it',
  );
  assert.equal(await countedTickets(org), 12);
  assert.equal((await build(org)).ticket_count, 12);
});

test('when the digest process is killed mid-stream and restarted, then every ticket is still counted once', async (t) => {
  const org = 'dg-restart';
  await stack.orgWithKey(org);
  const now = new Date();
  // Enough events that the digest (batched pulls, two workers) is still busy when killed.
  const total = 1200;
  const events = Array.from({ length: total }, (_, i) =>
    createdEnvelope(org, 1_000_000 + i, `Bulk question ${i % 7}: how do I rotate API keys?`, now),
  );
  await publishEvents(stack.nats.url, events.slice(0, total / 2));
  const publishing = publishEvents(stack.nats.url, events.slice(total / 2));
  // Kill as soon as a good part of the stream is unsettled (pending or in the digest's hands).
  let backlogAtKill = 0;
  for (const until = Date.now() + 10_000; Date.now() < until;) {
    backlogAtKill = (await consumerBacklog(stack.nats.url, CONSUMER)) ?? 0;
    if (backlogAtKill >= 50) break;
    await new Promise((r) => setTimeout(r, 5));
  }
  await stack.service('digest').stop('SIGKILL');
  t.diagnostic(`digest killed with ${backlogAtKill} events unsettled`);
  await publishing;
  stack.service('digest').start();
  await stack.waitForService('digest');
  await waitForDigestToCatchUp(org, total);
  // A graceful restart in the middle of nothing changes nothing either.
  await stack.restartService('digest');
  await waitForConsumer(stack.nats.url, CONSUMER);
  assert.equal(await countedTickets(org), total);
  assert.equal((await build(org)).ticket_count, total);
  assert.ok(backlogAtKill > 0, 'the kill came while events were still unsettled');
});

test('when a malformed event is on the stream, then the digest drops it once and its backlog drains', async () => {
  const bad = createdEnvelope('dg-a', 3_000_000, 'never counted', new Date());
  delete (bad.data as Record<string, unknown>).content;
  const droppedBefore = await scrapeMetric(metricsPort, 'digest_events_dropped_total');
  await publishEvents(stack.nats.url, [bad]);
  await waitForConsumer(stack.nats.url, CONSUMER, 10_000);
  // Past the ack wait (2 s here): a dropped event must not come back.
  await new Promise((r) => setTimeout(r, 3_000));
  assert.equal(await consumerBacklog(stack.nats.url, CONSUMER), 0);
  assert.equal(
    (await scrapeMetric(metricsPort, 'digest_events_dropped_total')) - droppedBefore,
    1,
    'dropped once, never redelivered',
  );
  assert.equal(await countedTickets('dg-a'), 9);
});

test('when two digest replicas run the weekly schedule, then the due week is built once', async () => {
  const org = 'dg-sched';
  const key = await stack.orgWithKey(org, ['faq:read']);
  // Tickets of last week: events as the outbox writes them, with last week's timestamps.
  const lastMonday = addDays(weekStartOf(new Date()), -7);
  const lastWeek = isoDate(lastMonday);
  const events = [...PASSWORD, ...CSV].map((q, i) =>
    createdEnvelope(org, 2_000_000 + i, q, new Date(lastMonday.getTime() + 2 * 86_400_000 + i)),
  );
  await publishEvents(stack.nats.url, events);
  await waitForConsumer(stack.nats.url, CONSUMER);
  assert.equal(await countedTickets(org, lastWeek), events.length);

  // The week that just ended is due at once (offset 0); both replicas check every 100 ms.
  const schedule = {
    DIGEST_SCHEDULER_ENABLED: 'true',
    DIGEST_SCHEDULE_OFFSET_MINUTES: '0',
    DIGEST_SCHEDULER_TICK_MS: '100',
  };
  const primary = stack.service('digest');
  await primary.stop();
  primary.start(schedule);
  const replica = await stack.addReplica('digest', schedule);
  const replicaMetrics = stack.metricsPorts.get(replica.name)!;
  await stack.waitForService('digest');

  type Run = { finished_at: string | null; attempts: number; orgs_built: number };
  let runs: Run[] = [];
  await waitFor(
    async () => {
      runs = await queryRows<Run>(
        stack.mysqlUrl,
        'SELECT * FROM digest_runs WHERE week_start = ?',
        [lastWeek],
      );
      return runs[0]?.finished_at != null;
    },
    30_000,
    () => `weekly run not finished: ${JSON.stringify(runs)}`,
  );
  // More ticks on both replicas must not build the week again.
  await new Promise((r) => setTimeout(r, 1_500));
  runs = await queryRows<Run>(stack.mysqlUrl, 'SELECT * FROM digest_runs');
  assert.equal(runs.length, 1, JSON.stringify(runs));
  assert.equal(runs[0]!.attempts, 1);
  const orgsLastWeek = await queryRows<{ org_id: string }>(
    stack.mysqlUrl,
    'SELECT org_id FROM digest_weeks WHERE week_start = ? AND ticket_count > 0',
    [lastWeek],
  );
  assert.ok(orgsLastWeek.some((r) => r.org_id === org));
  assert.equal(runs[0]!.orgs_built, orgsLastWeek.length, 'every org with tickets last week, once');
  const scheduled = { trigger: 'schedule' };
  const builds =
    (await scrapeMetric(metricsPort, 'digest_builds_total', scheduled)) +
    (await scrapeMetric(replicaMetrics, 'digest_builds_total', scheduled));
  assert.equal(builds, orgsLastWeek.length, 'one scheduled build per org across both replicas');
  const finishedLogs = [primary.logs(), replica.logs()]
    .join('\n')
    .split('\n')
    .filter((l) => l.includes('weekly digest run finished'));
  assert.equal(finishedLogs.length, 1);

  const digests = await queryRows<{ week_start: string; ticket_count: number }>(
    stack.mysqlUrl,
    'SELECT week_start, ticket_count FROM digests WHERE org_id = ?',
    [org],
  );
  assert.deepEqual(digests, [{ week_start: lastWeek, ticket_count: events.length }]);
  // The digest was restarted moments ago: until the gateway has reconnected (its back-off is at
  // most 2 s) an organization it never answered gets 503 with Retry-After, and a client asks
  // again.
  let res = await faq(key);
  for (const until = Date.now() + 10_000; res.status === 503 && Date.now() < until;) {
    await new Promise((r) => setTimeout(r, 500));
    res = await faq(key);
  }
  assert.equal(res.status, 200, JSON.stringify(res.json));
  assert.equal(res.json.week_start, lastWeek);
  assert.equal(res.json.week_end, isoDate(addDays(lastMonday, 6)));
  assert.equal(res.json.ticket_count, events.length);
  const found = topics(res.json.content);
  assert.deepEqual(
    [...found.values()].sort((a, b) => b - a),
    [4, 3],
  );
});
