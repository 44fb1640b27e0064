// End-to-end: every created ticket yields exactly one tickets.created event on
// JetStream, also when NATS is down while tickets are created (the outbox drains).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readStream } from '../support/events.js';
import { Stack, api, waitFor } from '../support/stack.js';

let stack: Stack;
let key: string;

before(async () => {
  stack = await Stack.onTestBackends('e2e-events', {
    services: ['tickets'],
  });
  key = await stack.orgWithKey('events');
});

after(() => stack?.stop());

/** The org's tickets.created events per ticket number (numbers are per organization). */
async function createdEventsByTicket(): Promise<Map<number, number>> {
  const counts = new Map<number, number>();
  for (const m of await readStream(stack.nats.url)) {
    if (m.subject !== 'tickets.created' || m.event.org_id !== 'events') continue;
    assert.equal(m.msgId, m.event.id, 'Nats-Msg-Id is the event id');
    const number = m.event.ticket_number!;
    counts.set(number, (counts.get(number) ?? 0) + 1);
  }
  return counts;
}

test('when tickets are created, then each has exactly one tickets.created event with the envelope of DESIGN.md', async () => {
  const ids: number[] = [];
  for (let i = 0; i < 10; i++)
    ids.push(
      (
        await api(stack.baseUrl(), 'POST', '/api/v1/agent/tickets', {
          key,
          body: { content: `event ${i}` },
        })
      ).json.ticket_id,
    );
  await waitFor(async () => {
    const counts = await createdEventsByTicket();
    return ids.every((id) => counts.has(id));
  }, 10_000);
  const counts = await createdEventsByTicket();
  for (const id of ids) assert.equal(counts.get(id), 1, `ticket ${id}`);
  const sample = (await readStream(stack.nats.url)).find(
    (m) => m.event.org_id === 'events' && m.event.ticket_number === ids[0],
  )!;
  assert.equal(sample.event.type, 'tickets.created');
  assert.equal(sample.event.org_id, 'events');
  assert.match(sample.event.id, /^[0-9a-f-]{36}$/);
  assert.match(sample.event.occurred_at, /Z$/);
  assert.equal(sample.event.data.content, 'event 0');
});

test('when NATS is down during creation and comes back, then the outbox delivers every event exactly once', async () => {
  await stack.nats.stop();
  const ids: number[] = [];
  for (let i = 0; i < 20; i++) {
    const res = await api(stack.baseUrl(), 'POST', '/api/v1/agent/tickets', {
      key,
      body: { content: `while down ${i}` },
      headers: { 'Idempotency-Key': `down-${i}` },
    });
    assert.equal(res.status, 201, 'creation does not depend on NATS');
    ids.push(res.json.ticket_id);
  }
  // Retries of the same keys while NATS is down create nothing new.
  for (let i = 0; i < 5; i++) {
    const res = await api(stack.baseUrl(), 'POST', '/api/v1/agent/tickets', {
      key,
      body: { content: 'retry' },
      headers: { 'Idempotency-Key': `down-${i}` },
    });
    assert.equal(res.json.duplicate, true);
  }
  await stack.nats.restart();
  await waitFor(
    async () => {
      const counts = await createdEventsByTicket();
      return ids.every((id) => counts.get(id) === 1);
    },
    30_000,
    () => 'not every ticket created while NATS was down reached the stream',
  );
  // Give the relay a moment to (wrongly) publish anything twice, then check exactly-once.
  await new Promise((r) => setTimeout(r, 1_000));
  const counts = await createdEventsByTicket();
  for (const id of ids) assert.equal(counts.get(id), 1, `ticket ${id}`);
  assert.ok(
    [...counts.values()].every((n) => n === 1),
    'no ticket has two created events',
  );
});

test('when the tickets service is killed and restarted, then pending events are still delivered once', async () => {
  await stack.nats.stop();
  const ids: number[] = [];
  for (let i = 0; i < 5; i++)
    ids.push(
      (
        await api(stack.baseUrl(), 'POST', '/api/v1/agent/tickets', {
          key,
          body: { content: `crash ${i}` },
        })
      ).json.ticket_id,
    );
  await stack.tickets.stop('SIGKILL');
  await stack.nats.restart();
  stack.tickets.start();
  await stack.waitForTickets();
  await waitFor(async () => {
    const counts = await createdEventsByTicket();
    return ids.every((id) => counts.get(id) === 1);
  }, 30_000);
  const counts = await createdEventsByTicket();
  assert.ok([...counts.values()].every((n) => n === 1));
});
