// The JetStream publisher's acknowledgements (pub-acks.ts) on a real NATS server of this file's
// own: each message of a batch settled by its own PubAck, in order on the stream, Nats-Msg-Id
// kept, a missing stream reported as 503 and recreated, a frozen server reported as a timeout
// within the publish timeout; and what each kind of reply stands for.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { connect, headers, type JetStreamManager, type NatsConnection } from 'nats';
import { pino } from 'pino';
import {
  JetStreamEventPublisher,
  newTicketEvent,
  pubAckOutcome,
  PublishError,
  STREAM_NAME,
  toOutboxMessage,
  type OutboxMessage,
} from '@support-agent/events';
import { startNats, type NatsHandle } from '../../../test/support/backends.js';
import { eventually } from '../../../test/support/testing.js';

const logger = pino({ level: 'silent' });
const encoder = new TextEncoder();

function created(org: string, ticketId: number): OutboxMessage {
  return toOutboxMessage(
    newTicketEvent(
      'tickets.created',
      {
        org_id: org,
        ticket_id: ticketId,
        ticket_number: ticketId,
        occurred_at: '2026-11-20T10:00:00.000Z',
      },
      {
        content: `Ticket ${ticketId}`,
        author_name: null,
        status: 'open',
        priority: 'medium',
        category: null,
        created_at: '2026-11-20T10:00:00.000Z',
      },
    ),
  );
}

/** The stream's messages of `org`, in stream order, as [Nats-Msg-Id, event id in the body]. */
async function stored(jsm: JetStreamManager, org: string): Promise<Array<[string, string]>> {
  const info = await jsm.streams.info(STREAM_NAME);
  const found: Array<[string, string]> = [];
  for (let seq = info.state.first_seq; seq <= info.state.last_seq; seq++) {
    const m = await jsm.streams.getMessage(STREAM_NAME, { seq }).catch(() => undefined);
    if (!m) continue;
    const body = m.json<{ id: string; org_id: string }>();
    if (body.org_id === org) found.push([m.header.get('Nats-Msg-Id'), body.id]);
  }
  return found;
}

describe('JetStream publisher acknowledgements', () => {
  let dir: string;
  let nats: NatsHandle;
  let nc: NatsConnection;
  let jsm: JetStreamManager;
  let publisher: JetStreamEventPublisher;

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'events-publisher-'));
    nats = await startNats(join(dir, 'nats'));
    nc = await connect({ servers: nats.url });
    jsm = await nc.jetstreamManager();
    publisher = new JetStreamEventPublisher(nats.url, logger, { publishTimeoutMs: 400 });
    await eventually(
      async () => ((await publisher.publish([])).error === undefined ? true : undefined),
      15_000,
      'the publisher to connect',
    );
  });

  after(async () => {
    await publisher.close();
    await nc.close();
    await nats.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('when a batch is published, then every message is reported stored and is on the stream once, in order, under its event id', async () => {
    const batch = Array.from({ length: 40 }, (_, i) => created('batch', i + 1));
    const report = await publisher.publish(batch);
    assert.equal(report.error, undefined);
    assert.deepEqual(
      report.published,
      batch.map((m) => m.eventId),
    );
    const again = await publisher.publish(batch.slice(0, 5)); // a relay's retry
    assert.equal(again.error, undefined);
    assert.equal(again.published.length, 5);
    assert.deepEqual(
      await stored(jsm, 'batch'),
      batch.map((m) => [m.eventId, m.eventId]),
    );
  });

  it('when the stream is gone, then the batch is reported failed with 503 and nothing published, and a later publish recreates the stream', async () => {
    await jsm.streams.delete(STREAM_NAME);
    const message = created('gone', 1);
    const report = await publisher.publish([message]);
    assert.deepEqual(report.published, []);
    assert.equal((report.error as { code?: string } | undefined)?.code, '503');
    const retry = await publisher.publish([message]);
    assert.equal(retry.error, undefined);
    assert.deepEqual(retry.published, [message.eventId]);
    assert.deepEqual(await stored(jsm, 'gone'), [[message.eventId, message.eventId]]);
  });

  it('when the server is frozen, then the batch is reported failed with a timeout within the publish timeout, and published once when it thaws', async () => {
    const batch = [created('frozen', 1), created('frozen', 2)];
    await nats.freeze();
    let report;
    const started = Date.now();
    try {
      report = await publisher.publish(batch);
    } finally {
      nats.kill('SIGCONT');
    }
    const took = Date.now() - started;
    assert.deepEqual(report.published, []);
    assert.equal((report.error as { code?: string } | undefined)?.code, 'TIMEOUT');
    assert.ok(took >= 350 && took < 3_000, `reported after ${took} ms`);
    await eventually(
      async () => ((await publisher.publish(batch)).error === undefined ? true : undefined),
      15_000,
      'a publish after the thaw',
    );
    // The frozen attempt's messages may have reached the stream; the retry's copies did not.
    assert.deepEqual(
      await stored(jsm, 'frozen'),
      batch.map((m) => [m.eventId, m.eventId]),
    );
  });
});

describe('what a reply to a JetStream publish stands for', () => {
  const reply = (body: string, status?: number) => {
    const h = status === undefined ? undefined : headers(status, 'No Responders');
    return { data: encoder.encode(body), headers: h };
  };

  it('when the reply names the stream, then the message is stored, a duplicate when it says so', () => {
    assert.deepEqual(pubAckOutcome(reply('{"stream":"TICKETS","seq":7}')), {
      ok: true,
      duplicate: false,
    });
    assert.deepEqual(pubAckOutcome(reply('{"stream":"TICKETS","seq":7,"duplicate":true}')), {
      ok: true,
      duplicate: true,
    });
  });

  it('when the reply is an empty 503 status, a JetStream error, names no stream or is not JSON, then it is a failure with a code', () => {
    const codeOf = (r: ReturnType<typeof reply>) => {
      const outcome = pubAckOutcome(r);
      if (outcome.ok) throw new Error('a failure was expected');
      assert.ok(outcome.error instanceof PublishError);
      return outcome.error.code;
    };
    assert.equal(codeOf(reply('', 503)), '503');
    assert.equal(
      codeOf(
        reply('{"error":{"code":503,"err_code":10077,"description":"maximum messages exceeded"}}'),
      ),
      '503',
    );
    assert.equal(
      codeOf(reply('{"error":{"code":400,"err_code":10060,"description":"expected stream"}}')),
      '400',
    );
    assert.equal(codeOf(reply('{"seq":1}')), 'INVALID_ACK');
    assert.equal(codeOf(reply('not json')), 'INVALID_ACK');
  });
});
