// Crash safety of the triage pipeline: the service is SIGKILLed while it triages a burst of
// tickets and started again; every ticket must be triaged (ApplyTriage applied) exactly once
// and every covered ticket counted exactly once in the ledger. Once over JetStream + MariaDB,
// once fully embedded (JSONL event file + journal ledger).
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { callUnary, checkHealth, createGrpcClient } from '@support-agent/shared';
import { answers } from '@support-agent/proto';
import { freePort, startNats, type NatsHandle } from '../../../test/support/backends.js';
import { createTestDatabase } from '../../../test/support/mysql.js';
import { ServiceProcess } from '../../../test/support/process.js';
import { appendEvent, EventPublisher, ticketCreated } from './support/events.js';
import { KB, waitFor } from './support/service.js';
import { KnowledgeStub, TicketsStub } from './support/stubs.js';
import { stopAll } from '../../../test/support/testing.js';

const ORG = 'crash';
const TICKETS = 30;
/** Every third ticket is a bug report the KB does not cover; the others are answered. */
const covered = (i: number) => i % 3 !== 0;
const content = (i: number) =>
  covered(i)
    ? [
        'How do I reset my password?',
        'How do I export tickets to CSV?',
        'Where can I download my invoices?',
      ][i % 3]!
    : `The app crashes when I open report ${i}.`;

async function usedDeflections(address: string): Promise<number> {
  const client = createGrpcClient(answers.AnswersServiceClient, address);
  try {
    return (
      await callUnary(client.getUsage.bind(client), { orgId: ORG, deflectionMonthlyLimit: 1000 })
    ).deflectionsUsed;
  } finally {
    client.close();
  }
}

interface Harness {
  env: Record<string, string>;
  publish(i: number): Promise<void>;
  cleanup(): Promise<void>;
}

async function crashAndRecover(
  harness: Harness,
  knowledge: KnowledgeStub,
  tickets: TicketsStub,
  dir: string,
): Promise<void> {
  const address = harness.env.ANSWERS_ADDR!;
  const proc = new ServiceProcess('answers', 'answers', harness.env, dir, true);
  proc.start();
  try {
    await waitFor(() => checkHealth(address), 30_000, 'answers to serve');
    knowledge.delayMs = 150; // slow answers, so the kill lands mid-triage
    for (let i = 1; i <= TICKETS; i++) await harness.publish(i);
    await waitFor(() => tickets.appliedCalls().length >= 6, 30_000, 'some tickets triaged');
    await proc.stop('SIGKILL');
    const triagedBeforeCrash = tickets.appliedCalls().length;
    assert.ok(triagedBeforeCrash < TICKETS, 'the crash happened mid-burst');

    proc.start();
    await waitFor(
      () => new Set(tickets.appliedCalls().map((c) => c.request.ticketId)).size === TICKETS,
      60_000,
      'every ticket triaged after the restart',
    );
    await new Promise((r) => setTimeout(r, 1_000)); // room for a wrong second application
    for (let i = 1; i <= TICKETS; i++) {
      const applied = tickets.appliedCalls(i);
      assert.equal(applied.length, 1, `ticket ${i} applied ${applied.length} times`);
      assert.equal(applied[0]!.request.resolve, covered(i), `ticket ${i} resolve`);
    }
    const expected = Array.from({ length: TICKETS }, (_, k) => k + 1).filter(covered).length;
    await waitFor(() => checkHealth(address), 30_000, 'answers to serve again');
    assert.equal(await usedDeflections(address), expected);
  } catch (err) {
    process.stderr.write(proc.logs().split('\n').slice(-40).join('\n'));
    throw err;
  } finally {
    await proc.stop('SIGTERM');
  }
}

describe('crash mid-triage', () => {
  let knowledge: KnowledgeStub;
  let tickets: TicketsStub;
  let knowledgeAddr: string;
  let ticketsAddr: string;

  before(async () => {
    knowledge = new KnowledgeStub();
    tickets = new TicketsStub();
    knowledgeAddr = await knowledge.start();
    ticketsAddr = await tickets.start();
  });

  after(() => stopAll(knowledge, tickets));

  test('when the service is killed mid-triage over JetStream and restarted, then each ticket is triaged exactly once', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'answers-crash-js-'));
    knowledge.kb.set(ORG, KB);
    tickets.calls.length = 0;
    let nats: NatsHandle | undefined;
    let db: Awaited<ReturnType<typeof createTestDatabase>> | undefined;
    let publisher: EventPublisher | undefined;
    try {
      nats = await startNats(join(dir, 'nats'));
      db = await createTestDatabase('answers_crash');
      publisher = await EventPublisher.connect(nats.url);
      const pub = publisher;
      const env = {
        ANSWERS_ADDR: `127.0.0.1:${await freePort()}`,
        KNOWLEDGE_ADDR: knowledgeAddr,
        TICKETS_ADDR: ticketsAddr,
        MYSQL_URL: db.url,
        NATS_URL: nats.url,
        DATA_DIR: join(dir, 'data'),
        LOG_LEVEL: 'info',
        TRIAGE_ACK_WAIT_MS: '2000',
        RESERVATION_TTL_MS: '5000',
      };
      await crashAndRecover(
        {
          env,
          publish: (i) => pub.publish(ticketCreated(ORG, i, content(i))),
          cleanup: async () => undefined,
        },
        knowledge,
        tickets,
        dir,
      );
    } finally {
      knowledge.delayMs = 0;
      await publisher?.close();
      await nats?.stop();
      await db?.drop();
    }
  });

  test('when the service is killed mid-triage in embedded mode and restarted, then each ticket is triaged exactly once', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'answers-crash-emb-'));
    knowledge.kb.set(ORG, KB);
    tickets.calls.length = 0;
    const dataDir = join(dir, 'data');
    const eventsFile = join(dataDir, 'events', 'tickets.jsonl');
    const env = {
      ANSWERS_ADDR: `127.0.0.1:${await freePort()}`,
      KNOWLEDGE_ADDR: knowledgeAddr,
      TICKETS_ADDR: ticketsAddr,
      EMBEDDED: 'true',
      DATA_DIR: dataDir,
      LOG_LEVEL: 'info',
      RESERVATION_TTL_MS: '5000',
    };
    try {
      await crashAndRecover(
        {
          env,
          publish: async (i) => appendEvent(eventsFile, ticketCreated(ORG, i, content(i))),
          cleanup: async () => undefined,
        },
        knowledge,
        tickets,
        dir,
      );
    } finally {
      knowledge.delayMs = 0;
    }
  });
});
