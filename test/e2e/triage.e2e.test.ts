// End-to-end: the triage pipeline. A ticket created through the gateway goes
// tickets → outbox → JetStream → answers (labels, automatic answer, deflection ledger) →
// tickets.ApplyTriage, and is visible through GET /tickets; every process is its own.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readStream, type EventEnvelope } from '../support/events.js';
import { createdEnvelope, publishEvents, waitForConsumer } from '../support/pipeline.js';
import { SAMPLE_KB } from '../support/kb.js';
import { Stack, api, waitFor } from '../support/stack.js';

let stack: Stack;

const KB = SAMPLE_KB.slice(0, 3);
const COVERED = ['How do I reset my password?', 'How do I export tickets to CSV?'];
const UNCOVERED = [
  'The mobile app crashes with a white screen when I rotate my phone on Android 14.',
  'Please add a dark mode to the dashboard, my eyes hurt at night.',
];

interface TicketJson {
  id: number;
  content: string;
  category: string | null;
  priority: string;
  status: string;
  ai_summary: string | null;
  created_at: string;
}

before(async () => {
  stack = await Stack.onTestBackends('e2e-triage', {
    // A triage cut short by a crash is redelivered after the ack wait: keep it short.
    env: { DIGEST_METRICS_PORT: '0', TRIAGE_ACK_WAIT_MS: '2000' },
  });
});

after(() => stack?.stop());

async function orgWithKb(org: string, settings?: Record<string, number>): Promise<string> {
  const key = await stack.orgWithKey(org, undefined, settings);
  await stack.admin('POST', `/admin/v1/orgs/${org}/kb/entries`, KB);
  return key;
}

async function createTicket(key: string, content: string): Promise<number> {
  const res = await api(stack.baseUrl(), 'POST', '/api/v1/agent/tickets', {
    key,
    body: { content },
  });
  assert.equal(res.status, 201, res.text);
  return res.json.ticket_id as number;
}

/** Every ticket of the key's organization, through the public API (all pages). */
async function listTickets(key: string): Promise<Map<number, TicketJson>> {
  const all = new Map<number, TicketJson>();
  let cursor: string | null = null;
  do {
    const q: string = cursor ? `&cursor=${encodeURIComponent(cursor)}` : '';
    const res = await api(stack.baseUrl(), 'GET', `/api/v1/agent/tickets?limit=20${q}`, { key });
    assert.equal(res.status, 200, res.text);
    for (const t of res.json.tickets as TicketJson[]) all.set(t.id, t);
    cursor = res.json.next_cursor;
  } while (cursor);
  return all;
}

/** Polls GET /tickets until every given ticket carries triage labels. */
async function waitForTriage(
  key: string,
  ids: number[],
  timeoutMs = 20_000,
): Promise<Map<number, TicketJson>> {
  let tickets = new Map<number, TicketJson>();
  await waitFor(
    async () => {
      tickets = await listTickets(key);
      return ids.every((id) => tickets.get(id)?.category != null);
    },
    timeoutMs,
    () => `not triaged: ${ids.filter((id) => tickets.get(id)?.category == null).join(', ')}`,
    200,
  );
  return tickets;
}

async function eventsOf(org: string, type: string): Promise<EventEnvelope[]> {
  return (await readStream(stack.nats.url))
    .filter((m) => m.event.org_id === org && m.event.type === type)
    .map((m) => m.event);
}

const usage = async (org: string) =>
  (await stack.admin<{ deflections_used: number }>('GET', `/admin/v1/orgs/${org}/usage`))
    .deflections_used;

function assertLabelled(t: TicketJson): void {
  assert.ok(
    ['bug', 'feature_request', 'documentation', 'how_to', 'general_question'].includes(t.category!),
    `category ${t.category}`,
  );
  assert.ok(['critical', 'high', 'medium', 'low'].includes(t.priority), `priority ${t.priority}`);
  assert.equal(typeof t.ai_summary, 'string');
  assert.ok(t.ai_summary!.trim().length > 0);
}

test('when a ticket is answered well by the KB, then it ends resolved with labels and the answer', async () => {
  const key = await orgWithKb('tri-covered');
  const id = await createTicket(key, COVERED[0]!);
  const ticket = (await waitForTriage(key, [id], 10_000)).get(id)!;
  assert.equal(ticket.status, 'resolved');
  assertLabelled(ticket);
  const [triaged, ...more] = (await eventsOf('tri-covered', 'tickets.triaged')).filter(
    (e) => e.ticket_number === id,
  );
  assert.equal(more.length, 0, 'one tickets.triaged event');
  assert.equal(triaged!.data.answered, true);
  assert.ok(String(triaged!.data.ai_answer).includes(KB[0]!.answer), 'the answer is the entry');
  const changed = (await eventsOf('tri-covered', 'tickets.status_changed')).filter(
    (e) => e.ticket_number === id,
  );
  assert.deepEqual(
    changed.map((e) => e.data),
    [{ from: 'open', to: 'resolved' }],
  );
  assert.equal(await usage('tri-covered'), 1, 'the automatic answer counts as a deflection');
});

test('when the KB cannot answer a ticket, then it stays open with labels and nothing is counted', async () => {
  const key = await orgWithKb('tri-uncovered');
  const ids = [];
  for (const content of UNCOVERED) ids.push(await createTicket(key, content));
  const tickets = await waitForTriage(key, ids, 10_000);
  for (const id of ids) {
    const t = tickets.get(id)!;
    assert.equal(t.status, 'open');
    assertLabelled(t);
  }
  const triaged = await eventsOf('tri-uncovered', 'tickets.triaged');
  assert.deepEqual(triaged.map((e) => e.ticket_number).sort(), [...ids].sort());
  for (const e of triaged) {
    assert.equal(e.data.answered, false);
    assert.equal(e.data.ai_answer, null);
  }
  assert.equal(tickets.get(ids[0]!)!.category, 'bug', 'the crash report reads as a bug');
  assert.equal(tickets.get(ids[1]!)!.category, 'feature_request');
  assert.equal(await usage('tri-uncovered'), 0);
});

test('when the deflection limit is reached, then triage labels the ticket and leaves it open', async () => {
  const key = await orgWithKb('tri-limit', { deflection_monthly_limit: 1 });
  const first = await createTicket(key, COVERED[0]!);
  assert.equal((await waitForTriage(key, [first])).get(first)!.status, 'resolved');
  const second = await createTicket(key, COVERED[1]!);
  const t = (await waitForTriage(key, [second])).get(second)!;
  assert.equal(t.status, 'open', 'no automatic answer past the limit');
  assertLabelled(t);
  assert.equal(await usage('tri-limit'), 1);
});

test('when the answers service is killed mid-triage and restarted, then every ticket is triaged exactly once', async (t) => {
  const org = 'tri-crash';
  const key = await orgWithKb(org);
  const texts = Array.from({ length: 40 }, (_, i) =>
    i % 2 === 0 ? COVERED[(i / 2) % 2]! : `${UNCOVERED[((i - 1) / 2) % 2]!} (#${i})`,
  );
  const ids = await Promise.all(texts.map((content) => createTicket(key, content)));
  const triagedCount = async () => {
    const now = await listTickets(key);
    return ids.filter((id) => now.get(id)?.category != null).length;
  };
  // Kill as soon as triage is under way: some tickets done, the rest pending or in hand.
  await waitFor(
    async () => (await triagedCount()) >= 1,
    10_000,
    () => 'triage never started',
    10,
  );
  await stack.service('answers').stop('SIGKILL');
  const triagedAtKill = await triagedCount();
  t.diagnostic(`${triagedAtKill} of ${ids.length} tickets were triaged when answers was killed`);
  assert.ok(triagedAtKill < ids.length, 'the kill came mid-triage');
  stack.service('answers').start();
  await stack.waitForService('answers');

  const tickets = await waitForTriage(key, ids, 30_000);
  // The tickets outbox may still be publishing the last ApplyTriage events: wait for all of them.
  let triaged: EventEnvelope[] = [];
  await waitFor(
    async () => {
      triaged = await eventsOf(org, 'tickets.triaged');
      return ids.every((id) => triaged.some((e) => e.ticket_number === id));
    },
    10_000,
    () => 'a triaged ticket has no tickets.triaged event',
  );
  // Everything settled: no redelivery can add a second triage after this.
  await waitForConsumer(stack.nats.url, 'answers-triage');
  triaged = await eventsOf(org, 'tickets.triaged');
  const perTicket = new Map<number, number>();
  for (const e of triaged)
    perTicket.set(e.ticket_number!, (perTicket.get(e.ticket_number!) ?? 0) + 1);
  for (const id of ids) assert.equal(perTicket.get(id), 1, `ticket ${id}: one tickets.triaged`);
  assert.equal(triaged.length, ids.length);

  const resolved = ids.filter((id) => tickets.get(id)!.status === 'resolved');
  ids.forEach((id, i) => {
    assertLabelled(tickets.get(id)!);
    assert.equal(tickets.get(id)!.status, i % 2 === 0 ? 'resolved' : 'open', `ticket ${id}`);
  });
  assert.equal(await usage(org), resolved.length, 'deflections = resolved tickets');
  assert.equal(resolved.length, ids.length / 2);
});

test('when an event names a ticket the tickets service does not have, then triage drops it for good', async () => {
  const org = 'tri-ghost';
  await orgWithKb(org);
  const ghost = createdEnvelope(org, 987_654, UNCOVERED[0]!, new Date());
  await publishEvents(stack.nats.url, [ghost]);
  const drops = () =>
    stack
      .service('answers')
      .logs()
      .split('\n')
      .filter((l) => l.includes('dropping ticket event') && l.includes(ghost.id)).length;
  await waitFor(
    () => drops() === 1,
    10_000,
    () => 'the event was never dropped',
  );
  // Past the ack wait (2 s here): a dropped event must not come back.
  await new Promise((r) => setTimeout(r, 3_000));
  assert.equal(drops(), 1, 'dropped once, never redelivered');
  await waitForConsumer(stack.nats.url, 'answers-triage', 1_000);
  assert.equal((await eventsOf(org, 'tickets.triaged')).length, 0);
});
