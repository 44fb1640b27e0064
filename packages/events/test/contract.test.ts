// The ticket events contract end to end: every event type through the one publisher and the
// one durable consumer, on a real NATS JetStream server of this file's own and on the embedded
// twins (JSONL file); events written before the envelope had a version, malformed ones, later
// versions and unknown types, as a consumer meets them on the stream; and stop() with an event
// in hand.
import assert from 'node:assert/strict';
import { appendFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, afterEach, before, beforeEach, describe, it } from 'node:test';
import { connect, nanos, RetentionPolicy, StorageType, type NatsConnection } from 'nats';
import { pino } from 'pino';
import {
  ALL_SUBJECTS,
  eventFilePath,
  FileTicketConsumer,
  invalidEvents,
  JetStreamEventPublisher,
  JetStreamTicketConsumer,
  JsonlEventPublisher,
  newTicketEvent,
  STREAM_NAME,
  toOutboxMessage,
  type BatchDeliveryHandler,
  type DeliveryHandler,
  type Disposition,
  type DurableConsumer,
  type EventPublisher,
  type TicketEnvelope,
  type TicketEvent,
  type TicketEventSource,
} from '@support-agent/events';
import { startNats, type NatsHandle } from '../../../test/support/backends.js';

const logLines: string[] = [];
const logger = pino({ level: 'info' }, { write: (line: string) => void logLines.push(line) });

const AT = '2026-11-20T10:00:00.000Z';

/**
 * One event of each type, built the way the tickets service builds them: the ticket numbered
 * `ticketNumber` in its organization, with a key apart from it (KEY_OFFSET above).
 */
const KEY_OFFSET = 1_000;
function everyType(org: string, ticketNumber: number): TicketEnvelope[] {
  const head = {
    org_id: org,
    ticket_id: KEY_OFFSET + ticketNumber,
    ticket_number: ticketNumber,
    occurred_at: AT,
  };
  return [
    newTicketEvent('tickets.created', head, {
      content: 'How do I reset my password?',
      author_name: null,
      status: 'open',
      priority: 'medium',
      category: null,
      created_at: AT,
    }),
    newTicketEvent('tickets.triaged', head, {
      category: 'how_to',
      priority: 'low',
      ai_summary: 'Password reset.',
      answered: true,
      ai_answer: 'Settings > Security > Reset password.',
      status: 'resolved',
    }),
    newTicketEvent('tickets.status_changed', head, { from: 'open', to: 'resolved' }),
  ];
}

/** A tickets.created body byte for byte as services/tickets wrote it before `version` existed. */
const OLD_ENVELOPE_ID = '0b6f1c9e-3f5a-4d1e-9a57-0c2d7e8f1a23';
const OLD_ENVELOPE =
  `{"id":"${OLD_ENVELOPE_ID}","type":"tickets.created","org_id":"old","ticket_id":41,` +
  `"occurred_at":"2026-11-01T08:00:00.000Z","data":{"content":"Where are my invoices?",` +
  `"author_name":"Ada","status":"open","priority":"medium","category":null,` +
  `"created_at":"2026-11-01T08:00:00.000Z"}}`;

/** What no consumer can read: missing fields, not JSON, a version from the future. */
const INVALID = [
  {
    id: 'malformed-1',
    subject: 'tickets.created',
    body: JSON.stringify({ id: 'malformed-1', type: 'tickets.created' }),
  },
  {
    id: 'bad-number-1',
    subject: 'tickets.status_changed',
    body: JSON.stringify({ ...everyType('bad', 8)[2], id: 'bad-number-1', ticket_number: 0 }),
  },
  { id: undefined, subject: 'tickets.created', body: '{not json' },
  {
    id: 'later-version-1',
    subject: 'tickets.status_changed',
    body: JSON.stringify({ ...everyType('future', 9)[2], id: 'later-version-1', version: 2 }),
  },
];
/** A type added after this contract: skipped, not an error. */
const UNKNOWN_TYPE = JSON.stringify({ ...everyType('new', 10)[0], type: 'tickets.merged' });

async function invalidCount(client: string): Promise<number> {
  return (await invalidEvents().get()).values.find((v) => v.labels.client === client)?.value ?? 0;
}

async function eventually(
  check: () => boolean | Promise<boolean>,
  what: string,
  timeoutMs = 15_000,
): Promise<void> {
  const until = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** Publishes through the shared publisher until it reports every message stored (it connects in the background). */
async function publishAll(publisher: EventPublisher, events: TicketEnvelope[]): Promise<void> {
  const messages = events.map(toOutboxMessage);
  await eventually(async () => {
    const report = await publisher.publish(messages);
    return report.error === undefined && report.published.length === messages.length;
  }, 'the publisher to store the events');
}

/** Starts `source` with a handler that records what it is handed. */
function collect(source: TicketEventSource): { seen: TicketEvent[]; invalid: string[] } {
  const seen: TicketEvent[] = [];
  const invalid: string[] = [];
  source.start(
    async ({ event }) => {
      seen.push(event);
      return { kind: 'ack' };
    },
    (reason) => invalid.push(reason),
  );
  return { seen, invalid };
}

/**
 * The test consumers' ack wait: longer than the 5 s a thrown handler's events wait before they
 * come back (delivery.ts), as in a deployment (30 s by default). With an ack wait shorter than
 * that delay, an event the handler threw on was now and then delivered twice (once by the
 * delay, once by the ack wait), and at 1 s a loaded machine could stall past the ack wait.
 */
const ACK_WAIT_MS = 6_000;

let consumerSeq = 0;
const newConsumer = (filterSubject = ALL_SUBJECTS): DurableConsumer => ({
  name: `contract-${process.pid}-${++consumerSeq}`,
  filterSubject,
  maxDeliver: -1,
});

/**
 * The two twins behind one face: publish through the shared publisher, write a raw body onto
 * the stream (what another producer, or an older one, left there), open a shared consumer.
 */
interface Transport {
  publisher: EventPublisher;
  raw(subject: string, body: string, id?: string): Promise<void>;
  consumer(consumer: DurableConsumer, batchSize?: number): TicketEventSource;
  /** Messages the consumer still holds or has not seen; 0 once everything is settled. */
  backlog(source: TicketEventSource): Promise<number | undefined>;
}

function contractSuite(name: string, open: () => Promise<Transport>, close: () => Promise<void>) {
  describe(name, () => {
    let t: Transport;
    /** The consumers a test started, stopped after it (so they never see the next test's events). */
    const sources: TicketEventSource[] = [];
    const track = (source: TicketEventSource) => (sources.push(source), source);
    const only = (events: TicketEvent[], ids: Array<string | undefined>) =>
      events.filter((e) => ids.includes(e.id));

    before(async () => {
      t = await open();
    });
    after(async () => {
      await t.publisher.close();
      await close();
    });
    beforeEach(() => {
      logLines.length = 0;
    });
    afterEach(async () => {
      for (const source of sources.splice(0)) await source.stop();
    });

    it('when every event type goes through the shared publisher, then the shared consumer hands each over once, validated and at version 1', async () => {
      const events = everyType('all-types', 1);
      await publishAll(t.publisher, events);
      await publishAll(t.publisher, events); // the relay retrying a batch: stored once
      const ids = events.map((e) => e.id);
      const { seen, invalid } = collect(track(t.consumer(newConsumer())));
      await eventually(() => only(seen, ids).length >= events.length, 'every type');
      await new Promise((r) => setTimeout(r, 300));
      const mine = only(seen, ids);
      assert.deepEqual(
        mine.map((e) => [e.id, e.type, e.version, e.ticket_id, e.ticket_number]).sort(),
        events.map((e) => [e.id, e.type, 1, KEY_OFFSET + 1, 1]).sort(),
      );
      const ofType = <T extends TicketEvent['type']>(type: T) =>
        mine.find((e): e is Extract<TicketEvent, { type: T }> => e.type === type)!;
      assert.equal(ofType('tickets.created').data.content, 'How do I reset my password?');
      assert.equal(ofType('tickets.created').data.category, null, 'optional text reads as null');
      assert.equal(
        ofType('tickets.triaged').data.ai_answer,
        'Settings > Security > Reset password.',
      );
      assert.equal(ofType('tickets.status_changed').data.to, 'resolved');
      assert.deepEqual(invalid, []);
    });

    it('when the stream holds an old envelope, invalid events and an unknown type, then the old one is read as version 1, each invalid one is terminated once, logged with its id and counted, and the unknown type is skipped', async () => {
      const consumer = newConsumer();
      await t.raw('tickets.created', OLD_ENVELOPE, OLD_ENVELOPE_ID);
      for (const bad of INVALID) await t.raw(bad.subject, bad.body);
      await t.raw('tickets.merged', UNKNOWN_TYPE);
      const after = everyType('after-bad', 2)[0]!;
      await publishAll(t.publisher, [after]);

      const counted = await invalidCount(consumer.name);
      const source = track(t.consumer(consumer));
      const { seen, invalid } = collect(source);
      await eventually(() => seen.some((e) => e.id === after.id), 'the event after the bad ones');
      assert.deepEqual(
        only(seen, [OLD_ENVELOPE_ID, after.id, ...INVALID.map((b) => b.id)])
          .map((e) => e.id)
          .sort(),
        [OLD_ENVELOPE_ID, after.id].sort(),
      );
      assert.ok(!seen.some((e) => (e.type as string) === 'tickets.merged'), 'unknown type skipped');
      const old = only(seen, [OLD_ENVELOPE_ID])[0]!;
      assert.equal(old.version, 1, 'an envelope without a version is version 1');
      // Written when ids came from one counter: its ticket's number is that id.
      assert.deepEqual([old.ticket_id, old.ticket_number], [41, 41]);
      assert.equal(old.type === 'tickets.created' && old.data.author_name, 'Ada');

      // Terminated: nothing left to deliver, even after more than an ack wait.
      await eventually(async () => (await t.backlog(source)) === 0, 'every message settled');
      await new Promise((r) => setTimeout(r, ACK_WAIT_MS + 500));
      assert.equal(invalid.length, INVALID.length, 'each invalid event was seen once');
      assert.equal((await invalidCount(consumer.name)) - counted, INVALID.length);
      assert.equal(await t.backlog(source), 0);
      const terminated = logLines
        .map((l) => JSON.parse(l) as { msg: string; eventId?: string; reason: string })
        .filter((l) => l.msg === 'terminating an invalid ticket event');
      assert.deepEqual(
        terminated.map((l) => String(l.eventId)).sort(),
        INVALID.map((b) => String(b.id)).sort(),
      );
      assert.match(terminated.find((l) => l.eventId === 'later-version-1')!.reason, /version 2/);
    });

    it('when a consumer filters one subject, then it is handed only that type', async () => {
      const events = everyType('filtered', 3);
      await publishAll(t.publisher, events);
      const { seen } = collect(track(t.consumer(newConsumer('tickets.triaged'))));
      await eventually(() => seen.some((e) => e.id === events[1]!.id), 'the triaged event');
      await new Promise((r) => setTimeout(r, 300));
      assert.ok(seen.length > 0 && seen.every((e) => e.type === 'tickets.triaged'));
    });

    it('when the outbox hands the publisher an invalid message, then it is not published, counted, and leaves the outbox', async () => {
      const counted = await invalidCount('publisher');
      const good = everyType('publisher-check', 4)[2]!;
      const bad = {
        eventId: 'bad-outbox-1',
        subject: 'tickets.created',
        payload: '{"id":"bad-outbox-1"}',
      };
      let report: Awaited<ReturnType<EventPublisher['publish']>> | undefined;
      await eventually(async () => {
        report = await t.publisher.publish([bad, toOutboxMessage(good)]);
        return report.error === undefined;
      }, 'a publish');
      assert.deepEqual(report!.published.sort(), [bad.eventId, good.id].sort());
      assert.equal((await invalidCount('publisher')) - counted, 1);
      const { seen } = collect(track(t.consumer(newConsumer())));
      await eventually(() => seen.some((e) => e.id === good.id), 'the valid event');
      assert.ok(!seen.some((e) => e.id === bad.eventId));
    });

    it('when events are waiting and a batch handler is started, then it is handed each valid one once, in batches of at most the batch size, and never an invalid one', async () => {
      const consumer = newConsumer();
      const events = Array.from({ length: 5 }, (_, i) => everyType('batches', 20 + i)).flat();
      await publishAll(t.publisher, events.slice(0, 8));
      const bad = JSON.stringify({ id: 'batch-bad-1', type: 'tickets.created' });
      await t.raw('tickets.created', bad, 'batch-bad-1');
      await publishAll(t.publisher, events.slice(8));
      const ids = events.map((e) => e.id);
      const batches: TicketEvent[][] = [];
      const batched: BatchDeliveryHandler = async (deliveries) => {
        batches.push(deliveries.map((d) => d.event));
        return deliveries.map(() => ({ kind: 'ack' }));
      };
      track(t.consumer(consumer, 4)).startBatches(batched);
      const seen = () => only(batches.flat(), ids);
      await eventually(() => seen().length >= ids.length, 'every event');
      await new Promise((r) => setTimeout(r, 1_500));
      assert.deepEqual(
        seen()
          .map((e) => e.id)
          .sort(),
        [...ids].sort(),
        'each once',
      );
      assert.ok(
        batches.every((b) => b.length >= 1 && b.length <= 4),
        'at most 4 per batch',
      );
      assert.ok(
        batches.some((b) => b.length > 1),
        'waiting events are handed over together',
      );
      assert.ok(!batches.flat().some((e) => e.id === 'batch-bad-1'));
      assert.ok(
        logLines.some(
          (l) => l.includes('terminating an invalid ticket event') && l.includes('batch-bad-1'),
        ),
      );
    });

    it('when a batch handler asks for some events of a batch again, then only those come back, as a later attempt', async () => {
      const consumer = newConsumer();
      const events = everyType('batch-retry', 30);
      await publishAll(t.publisher, events);
      const again = new Set([events[1]!.id]);
      const handed: Array<[string, number]> = [];
      track(t.consumer(consumer, 10)).startBatches(async (deliveries) =>
        deliveries.map((d): Disposition => {
          handed.push([d.event.id, d.attempt]);
          return again.has(d.event.id) && d.attempt === 1
            ? { kind: 'retry', delayMs: 100 }
            : { kind: 'ack' };
        }),
      );
      const mine = () => handed.filter(([id]) => events.some((e) => e.id === id));
      await eventually(() => mine().length >= events.length + 1, 'the retried event');
      await new Promise((r) => setTimeout(r, 1_500));
      assert.deepEqual(
        mine().sort(),
        [...events.map((e): [string, number] => [e.id, 1]), [events[1]!.id, 2]].sort(),
      );
    });

    it('when a batch handler throws, then every event of that batch comes back', async () => {
      const consumer = newConsumer();
      const events = everyType('batch-throws', 31);
      await publishAll(t.publisher, events);
      const ids = events.map((e) => e.id);
      let thrown: string[] | undefined;
      const handed: Array<[string, number]> = [];
      track(t.consumer(consumer, 10)).startBatches(async (deliveries) => {
        const mine = deliveries.filter((d) => ids.includes(d.event.id));
        if (mine.length > 0 && !thrown) {
          thrown = mine.map((d) => d.event.id);
          throw new Error('a bug');
        }
        for (const d of mine) handed.push([d.event.id, d.attempt]);
        return deliveries.map(() => ({ kind: 'ack' }));
      });
      await eventually(() => handed.length >= ids.length, 'every event handled', 20_000);
      await new Promise((r) => setTimeout(r, 1_500));
      assert.deepEqual(handed.map(([id]) => id).sort(), [...ids].sort(), 'each handled once');
      for (const id of thrown!) {
        assert.ok(handed.find(([h]) => h === id)![1] >= 2, `${id} came back as a later attempt`);
      }
    });

    it('when stop() is called while an event is handled, then it waits for that event, which is settled and not handed over again', async () => {
      const consumer = newConsumer();
      const event = everyType('stopping', 5)[0]!;
      await publishAll(t.publisher, [event]);
      let release!: () => void;
      const released = new Promise<void>((r) => (release = r));
      let inHand = false;
      const slow: DeliveryHandler = async ({ event: e }) => {
        if (e.id !== event.id) return { kind: 'ack' };
        inHand = true;
        await released;
        return { kind: 'ack' };
      };
      const first = t.consumer(consumer);
      first.start(slow);
      await eventually(() => inHand, 'the event in hand');
      let stopped = false;
      const stopping = first.stop().then(() => (stopped = true));
      await new Promise((r) => setTimeout(r, 300));
      assert.equal(stopped, false, 'stop() waits for the event in hand');
      release();
      await stopping;

      const next = everyType('stopping', 6)[1]!;
      await publishAll(t.publisher, [next]);
      const { seen } = collect(track(t.consumer(consumer)));
      await eventually(() => seen.some((e) => e.id === next.id), 'the next event');
      await new Promise((r) => setTimeout(r, 1_500));
      assert.ok(!seen.some((e) => e.id === event.id), 'the settled event is not handed over again');
    });
  });
}

let dir: string;
let nats: NatsHandle;
let nc: NatsConnection;

contractSuite(
  'ticket events on NATS JetStream',
  async () => {
    dir = mkdtempSync(join(tmpdir(), 'events-contract-'));
    nats = await startNats(join(dir, 'nats'));
    nc = await connect({ servers: nats.url });
    const publisher = new JetStreamEventPublisher(nats.url, logger);
    await publishAll(publisher, []); // connected, stream created
    return {
      publisher,
      raw: async (subject, body, id) => {
        await nc.jetstream().publish(subject, body, id ? { msgID: id } : {});
      },
      consumer: (consumer, batchSize) =>
        new JetStreamTicketConsumer(nats.url, logger, {
          consumer,
          ackWaitMs: ACK_WAIT_MS,
          concurrency: 2,
          ...(batchSize === undefined ? {} : { batchSize }),
          replicas: 1,
          pullExpiresMs: 1_000,
        }),
      backlog: (source) => source.backlog(),
    };
  },
  async () => {
    const info = await (await nc.jetstreamManager()).streams.info(STREAM_NAME);
    // The stream the contract describes (checked here, at the end, after every publish).
    assert.deepEqual(info.config.subjects, [ALL_SUBJECTS]);
    assert.equal(info.config.storage, StorageType.File);
    assert.equal(info.config.retention, RetentionPolicy.Limits);
    assert.equal(info.config.max_age, 0);
    assert.equal(info.config.duplicate_window, nanos(120_000));
    await nc.close();
    await nats.stop();
    rmSync(dir, { recursive: true, force: true });
  },
);

let fileDir: string;
contractSuite(
  'ticket events in the embedded event file',
  async () => {
    fileDir = mkdtempSync(join(tmpdir(), 'events-contract-file-'));
    const file = eventFilePath(fileDir);
    return {
      publisher: new JsonlEventPublisher(file, logger),
      raw: async (_subject, body) => appendFileSync(file, `${body}\n`),
      consumer: (consumer, batchSize) =>
        new FileTicketConsumer(file, join(fileDir, `${consumer.name}.offset`), logger, {
          consumer,
          concurrency: 2,
          ...(batchSize === undefined ? {} : { batchSize }),
          pollMs: 50,
        }),
      backlog: (source) => source.backlog(),
    };
  },
  async () => rmSync(fileDir, { recursive: true, force: true }),
);
