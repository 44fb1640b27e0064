// The triage pipeline over JetStream (a NATS server of this file's own, so no other test's
// events interfere), with the ledger in MariaDB and in-test knowledge and tickets services.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import mysql from 'mysql2/promise';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startNats, type NatsHandle } from '../../../test/support/backends.js';
import { createTestDatabase } from '../../../test/support/mysql.js';
import { EventPublisher, ticketCreated } from './support/events.js';
import { KB, startAnswers, testEnv, waitFor, type RunningAnswers } from './support/service.js';
import { KnowledgeStub, TicketsStub } from './support/stubs.js';
import { stopAll } from '../../../test/support/testing.js';

let nats: NatsHandle;
let db: Awaited<ReturnType<typeof createTestDatabase>>;
let knowledge: KnowledgeStub;
let tickets: TicketsStub;
let svc: RunningAnswers;
let publisher: EventPublisher;
let nextTicket = 1;

before(async () => {
  nats = await startNats(mkdtempSync(join(tmpdir(), 'answers-triage-nats-')));
  db = await createTestDatabase('answers_triage');
  knowledge = new KnowledgeStub();
  tickets = new TicketsStub();
  svc = await startAnswers(
    testEnv({
      MYSQL_URL: db.url,
      NATS_URL: nats.url,
      EMBEDDED: 'false',
      KNOWLEDGE_ADDR: await knowledge.start(),
      TICKETS_ADDR: await tickets.start(),
      TRIAGE_ACK_WAIT_MS: '3000',
    }),
  );
  publisher = await EventPublisher.connect(nats.url);
});

after(() => stopAll(publisher, svc, knowledge, tickets, nats, db));

function org(name: string): string {
  knowledge.kb.set(name, KB);
  return name;
}

/** Reservation rows the ledger wrote for a request id (the event id, for triage). */
async function reservationsFor(requestId: string): Promise<number> {
  const conn = await mysql.createConnection({ uri: db.url });
  try {
    const [rows] = await conn.query<mysql.RowDataPacket[]>(
      'SELECT COUNT(*) AS n FROM answers_deflection_reservations WHERE request_id = ?',
      [requestId],
    );
    return Number(rows[0]!.n);
  } finally {
    await conn.end();
  }
}

const callsFor = (ticketId: number) => tickets.calls.filter((c) => c.request.ticketId === ticketId);

describe('triage over JetStream', () => {
  test('when a ticket the KB covers is created, then ApplyTriage is called once with labels, the answer and resolve', async () => {
    const o = org('t-covered');
    const id = nextTicket++;
    const event = ticketCreated(o, id, 'How can I reset my password?');
    await publisher.publish(event);
    await waitFor(() => callsFor(id).length === 1, 15_000, 'ApplyTriage');
    const req = callsFor(id)[0]!.request;
    assert.equal(req.orgId, o);
    assert.equal(req.eventId, event.id);
    assert.equal(req.category, 'how_to');
    assert.equal(req.priority, 'low');
    assert.ok(req.aiSummary.length > 0 && req.aiSummary.length <= 200);
    assert.match(req.aiAnswer ?? '', /Reset password/);
    assert.equal(req.resolve, true);
    assert.equal((await svc.usage(o)).deflectionsUsed, 1);
    assert.equal(await reservationsFor(event.id), 1, 'the answer went through the ledger');
  });

  test('when the event carries the ticket number apart from its key, then ApplyTriage names the ticket by its number', async () => {
    const o = org('t-number');
    const id = nextTicket++;
    const key = 50_000 + id;
    const event = { ...ticketCreated(o, key, 'How can I reset my password?'), ticket_number: id };
    await publisher.publish(event);
    await waitFor(() => callsFor(id).length === 1, 15_000, 'ApplyTriage');
    assert.equal(callsFor(id)[0]!.request.orgId, o);
    assert.equal(callsFor(key).length, 0, 'never by the key');
  });

  test('when a bug report the KB does not cover is created, then labels are applied, without answer, and the ledger is not touched', async () => {
    const o = org('t-bug');
    const id = nextTicket++;
    const event = ticketCreated(
      o,
      id,
      'The mobile app crashes every time I open the Inbox tab since the last update. Android 14, version 5.2.1.',
    );
    await publisher.publish(event);
    await waitFor(() => callsFor(id).length === 1, 15_000, 'ApplyTriage');
    const req = callsFor(id)[0]!.request;
    assert.equal(req.category, 'bug');
    assert.equal(req.priority, 'high');
    assert.equal(req.aiAnswer, undefined);
    assert.equal(req.resolve, false);
    assert.equal((await svc.usage(o)).deflectionsUsed, 0);
    // Nothing relevant was found, so no slot was reserved (and released) for it.
    assert.equal(await reservationsFor(event.id), 0);
  });

  test('when the same event is delivered again, then the ledger does not count it twice and tickets applies it once', async () => {
    const o = org('t-dup');
    const id = nextTicket++;
    const event = ticketCreated(o, id, 'Where can I download my invoices?');
    await publisher.publish(event);
    await waitFor(() => callsFor(id).length === 1, 15_000, 'first ApplyTriage');
    // A second copy with another message id gets past JetStream's de-duplication, like a redelivery.
    await publisher.publish(event, `${event.id}-again`);
    await waitFor(() => callsFor(id).length === 2, 15_000, 'second ApplyTriage');
    assert.deepEqual(
      callsFor(id).map((c) => c.applied),
      [true, false],
    );
    assert.equal(callsFor(id)[1]!.request.resolve, true, 'the repeat carries the same result');
    assert.equal((await svc.usage(o)).deflectionsUsed, 1);
  });

  test('when the org is at its deflection limit, then triage applies labels, no answer, and leaves the ticket open', async () => {
    const o = org('t-full');
    await svc.setPolicy(o, { deflectionMonthlyLimit: 1, highConfidenceThreshold: 75 });
    assert.equal((await svc.generate(o, 'How do I export tickets to CSV?')).highConfidence, true);
    const id = nextTicket++;
    await publisher.publish(ticketCreated(o, id, 'How do I reset my password?'));
    await waitFor(() => callsFor(id).length === 1, 15_000, 'ApplyTriage');
    const req = callsFor(id)[0]!.request;
    assert.equal(req.category, 'how_to');
    assert.equal(req.aiAnswer, undefined);
    assert.equal(req.resolve, false);
    assert.equal((await svc.usage(o)).deflectionsUsed, 1);
  });

  test('when tickets is briefly unavailable, then the event is retried and applied exactly once', async () => {
    const o = org('t-retry');
    const id = nextTicket++;
    tickets.failNext = 2;
    await publisher.publish(ticketCreated(o, id, 'How do I reset my password?'));
    await waitFor(() => callsFor(id).length === 1, 20_000, 'ApplyTriage after retries');
    assert.equal(tickets.failNext, 0);
    await new Promise((r) => setTimeout(r, 500));
    assert.equal(tickets.appliedCalls(id).length, 1);
    assert.equal((await svc.usage(o)).deflectionsUsed, 1);
  });

  test('when tickets fails after the ticket was labelled and answered, then the retry applies the same result without searching the KB again', async () => {
    const o = org('t-memo');
    const id = nextTicket++;
    const searches = knowledge.searches;
    tickets.failNext = 1;
    await publisher.publish(ticketCreated(o, id, 'How do I reset my password?'));
    await waitFor(() => callsFor(id).length === 1, 20_000, 'ApplyTriage after the retry');
    assert.equal(tickets.failNext, 0, 'the first ApplyTriage failed');
    assert.equal(knowledge.searches - searches, 1, 'one search for the two deliveries');
    assert.equal(callsFor(id)[0]!.request.resolve, true);
    assert.equal((await svc.usage(o)).deflectionsUsed, 1);
  });

  test('when an event is malformed or its ticket is gone, then it is dropped and later events still flow', async () => {
    const o = org('t-poison');
    await publisher.publishRaw('tickets.created', '{not json');
    await publisher.publishRaw(
      'tickets.created',
      JSON.stringify({ type: 'tickets.created', id: 'x' }),
    );
    const gone = nextTicket++;
    tickets.missing.add(gone);
    await publisher.publish(ticketCreated(o, gone, 'How do I reset my password?'));
    const id = nextTicket++;
    await publisher.publish(ticketCreated(o, id, 'Please add dark mode to the mobile app.'));
    await waitFor(() => callsFor(id).length === 1, 15_000, 'ApplyTriage of the later event');
    assert.equal(callsFor(id)[0]!.request.category, 'feature_request');
    assert.equal(callsFor(gone).length, 0);
    // The slot reserved for the vanished ticket's answer was committed (the answer was generated),
    // but the event is not retried forever: no further attempts after the drop.
    const searches = knowledge.searches;
    await new Promise((r) => setTimeout(r, 1_500));
    assert.equal(knowledge.searches, searches);
  });

  test('when the consumer is deleted under the running service, then it is created again and events keep flowing', async () => {
    const o = org('t-rebind');
    const { connect } = await import('nats');
    const nc = await connect({ servers: nats.url });
    try {
      const jsm = await nc.jetstreamManager();
      // NATS 2.9 sometimes reports a file-system race while pulls are in flight; the delete still happens.
      await jsm.consumers.delete('TICKETS', 'answers-triage').catch(() => undefined);
    } finally {
      await nc.close();
    }
    const id = nextTicket++;
    await publisher.publish(ticketCreated(o, id, 'How do I export tickets to CSV?'));
    await waitFor(
      () => callsFor(id).length === 1,
      30_000,
      'ApplyTriage after the consumer came back',
    );
    assert.equal(callsFor(id)[0]!.request.resolve, true);
  });
});
