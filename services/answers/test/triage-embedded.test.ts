// The triage pipeline in embedded mode: tailing DATA_DIR/events/tickets.jsonl with a durable offset.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { appendFileSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { appendEvent, ticketCreated } from './support/events.js';
import { KB, startAnswers, testEnv, waitFor, type RunningAnswers } from './support/service.js';
import { KnowledgeStub, TicketsStub } from './support/stubs.js';
import { stopAll } from '../../../test/support/testing.js';

let knowledge: KnowledgeStub;
let tickets: TicketsStub;
let env: Record<string, string>;
let svc: RunningAnswers;
let eventsFile: string;

before(async () => {
  knowledge = new KnowledgeStub();
  tickets = new TicketsStub();
  knowledge.kb.set('emb', KB);
  env = testEnv({ KNOWLEDGE_ADDR: await knowledge.start(), TICKETS_ADDR: await tickets.start() });
  eventsFile = join(env.DATA_DIR!, 'events', 'tickets.jsonl');
  svc = await startAnswers(env);
});

after(() => stopAll(svc, knowledge, tickets));

const callsFor = (ticketId: number) => tickets.calls.filter((c) => c.request.ticketId === ticketId);

describe('triage from the embedded event file', () => {
  test('when tickets.created lines are appended, then each is triaged and other event types are skipped', async () => {
    appendEvent(eventsFile, {
      id: 'e-0',
      type: 'tickets.status_changed',
      org_id: 'emb',
      ticket_id: 1,
      occurred_at: '',
      data: {},
    });
    appendEvent(eventsFile, ticketCreated('emb', 1, 'How do I export tickets to CSV?'));
    appendEvent(
      eventsFile,
      ticketCreated('emb', 2, 'It would be great to have an option to export reports to Excel.'),
    );
    await waitFor(
      () => callsFor(1).length === 1 && callsFor(2).length === 1,
      10_000,
      'both tickets triaged',
    );
    assert.equal(callsFor(1)[0]!.request.resolve, true);
    assert.match(callsFor(1)[0]!.request.aiAnswer ?? '', /Export > CSV/);
    assert.equal(callsFor(2)[0]!.request.category, 'feature_request');
    assert.equal(tickets.calls.length, 2);
    assert.equal((await svc.usage('emb')).deflectionsUsed, 1);
  });

  test('when the service restarts, then lines already handled are not triaged again and new ones are', async () => {
    await svc.stop();
    svc = await startAnswers(env);
    const offset = JSON.parse(
      readFileSync(join(env.DATA_DIR!, 'answers', 'triage-offset.json'), 'utf8'),
    ).offset;
    assert.equal(offset, readFileSync(eventsFile).length);
    appendEvent(eventsFile, ticketCreated('emb', 3, 'Where can I download my invoices?'));
    await waitFor(() => callsFor(3).length === 1, 10_000, 'ticket 3 triaged');
    assert.equal(tickets.calls.length, 3, 'tickets 1 and 2 were not triaged again');
    assert.equal((await svc.usage('emb')).deflectionsUsed, 2);
  });

  test('when a line is still being written, then it is read only once complete', async () => {
    const line = JSON.stringify(
      ticketCreated('emb', 4, 'Is there a phone number I can call for support?'),
    );
    appendFileSync(eventsFile, line.slice(0, 40));
    await new Promise((r) => setTimeout(r, 600));
    assert.equal(callsFor(4).length, 0);
    appendFileSync(eventsFile, `${line.slice(40)}\n`);
    await waitFor(() => callsFor(4).length === 1, 10_000, 'ticket 4 triaged');
    assert.equal(callsFor(4)[0]!.request.category, 'general_question');
  });
});
