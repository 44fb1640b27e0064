// End-to-end in embedded mode: no servers at all, data under DATA_DIR, the same
// HTTP contract, and a restart keeps tickets, keys and idempotency.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Stack, api } from '../support/stack.js';

let stack: Stack;
let key: string;
let readOnly: string;

before(async () => {
  stack = await new Stack({
    dir: mkdtempSync(join(tmpdir(), 'e2e-embedded-')),
    // Triage would relabel tickets between the reads this file compares.
    services: ['tickets'],
  }).start();
  key = await stack.orgWithKey('emb');
  readOnly = await stack.keyFor('emb', ['tickets:read']);
});

after(async () => {
  await stack?.stop();
});

test('when running embedded, then create, idempotent replay, list and paging work like the real backends', async () => {
  const created: number[] = [];
  for (let i = 0; i < 25; i++) {
    const res = await api(stack.baseUrl(), 'POST', '/api/v1/agent/tickets', {
      key,
      body: { content: `embedded ${i}` },
    });
    assert.equal(res.status, 201);
    created.push(res.json.ticket_id);
  }
  const replies = await Promise.all(
    Array.from({ length: 20 }, () =>
      api(stack.baseUrl(), 'POST', '/api/agent/tickets', {
        key,
        body: { content: 'once' },
        headers: { 'Idempotency-Key': 'emb-1' },
      }),
    ),
  );
  assert.equal(new Set(replies.map((r) => r.json.ticket_id)).size, 1);
  assert.equal(replies.filter((r) => r.json.duplicate).length, 19);
  created.push(replies[0]!.json.ticket_id);
  // The organization's own numbers: 1, 2, 3… whatever the other organizations do.
  assert.deepEqual(
    created,
    Array.from({ length: 26 }, (_, i) => i + 1),
  );

  const seen: number[] = [];
  let cursor: string | null = null;
  do {
    const q: string = cursor ? `?limit=20&cursor=${encodeURIComponent(cursor)}` : '?limit=20';
    const res = await api(stack.baseUrl(), 'GET', `/api/v1/agent/tickets${q}`, { key: readOnly });
    assert.equal(res.status, 200);
    seen.push(...res.json.tickets.map((t: { id: number }) => t.id));
    cursor = res.json.next_cursor;
  } while (cursor);
  assert.deepEqual(seen, [...created].reverse());
});

test('when the embedded services restart, then tickets, keys and idempotency are kept', async () => {
  const before = await api(stack.baseUrl(), 'GET', '/api/v1/agent/tickets?limit=20', { key });
  await stack.restartTickets();
  await stack.restartGateway(0);
  const after = await api(stack.baseUrl(), 'GET', '/api/v1/agent/tickets?limit=20', { key });
  assert.equal(after.status, 200, 'the key survived the restart');
  assert.equal(after.text, before.text);
  const replay = await api(stack.baseUrl(), 'POST', '/api/v1/agent/tickets', {
    key,
    body: { content: 'again' },
    headers: { 'Idempotency-Key': 'emb-1' },
  });
  assert.equal(replay.json.duplicate, true);
});

test('when running embedded, then ticket events are recorded in the embedded stream exactly once', async () => {
  const file = join(stack.options.dir, 'data', 'events', 'tickets.jsonl');
  assert.ok(existsSync(file));
  const events = readFileSync(file, 'utf8')
    .trim()
    .split('\n')
    .map(
      (l) =>
        JSON.parse(l) as { id: string; type: string; ticket_id: number; ticket_number: number },
    );
  const created = events.filter((e) => e.type === 'tickets.created');
  assert.equal(new Set(created.map((e) => e.id)).size, created.length);
  assert.equal(new Set(created.map((e) => e.ticket_id)).size, created.length);
  assert.deepEqual(
    created.map((e) => e.ticket_number).sort((a, b) => a - b),
    Array.from({ length: 26 }, (_, i) => i + 1),
  );
});

test('when running embedded, then auth and validation errors follow the same contract', async () => {
  const noKey = await api(stack.baseUrl(), 'GET', '/api/v1/agent/tickets');
  assert.equal(noKey.status, 401);
  const scope = await api(stack.baseUrl(), 'POST', '/api/v1/agent/tickets', {
    key: readOnly,
    body: { content: 'x' },
  });
  assert.equal(scope.status, 403);
  const tooLong = await api(stack.baseUrl(), 'POST', '/api/v1/agent/tickets', {
    key,
    body: { content: 'x'.repeat(4001) },
  });
  assert.equal(tooLong.status, 400);
  assert.equal(tooLong.json.error.param, 'content');
});
