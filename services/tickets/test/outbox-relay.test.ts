// The outbox relay's timing, on the embedded repository (the real adapter `npm start` uses) and
// a publisher that records what it is handed: a write wakes a sleeping relay, and after a batch
// that was not full the relay lingers so that the writes of the next milliseconds leave together.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, it } from 'node:test';
import type { EventPublisher, OutboxMessage, PublishReport } from '@support-agent/events';
import { EmbeddedTicketRepository } from '../src/data-access/embedded/ticket-repository.js';
import { OutboxRelay } from '../src/data-access/outbox-relay.js';
import { ticketCreated } from '../src/domain/events.js';
import { openedTicket } from '../src/domain/ticket.js';
import { eventually, testLogger } from './helpers.js';

/** Hands every message over as stored, and keeps each batch's event ids and when it came. */
class RecordingPublisher implements EventPublisher {
  readonly batches: Array<{ at: number; ids: string[] }> = [];
  async publish(messages: OutboxMessage[]): Promise<PublishReport> {
    this.batches.push({ at: performance.now(), ids: messages.map((m) => m.eventId) });
    return { published: messages.map((m) => m.eventId) };
  }
  async close(): Promise<void> {}
}

describe('outbox relay timing', () => {
  const cleanups: Array<() => Promise<void> | void> = [];
  afterEach(async () => {
    for (const c of cleanups.splice(0).reverse()) await c();
  });

  async function relayWith(lingerMs: number) {
    const dir = mkdtempSync(join(tmpdir(), 'relay-'));
    const repo = EmbeddedTicketRepository.open(dir, testLogger);
    const publisher = new RecordingPublisher();
    // A poll far longer than the test: only a write's notify() can wake the relay.
    const relay = new OutboxRelay(repo, publisher, testLogger, { pollMs: 60_000, lingerMs });
    relay.start();
    cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
    cleanups.push(() => repo.close());
    cleanups.push(() => relay.stop());
    // The relay's first look at the (empty) outbox is over before the writes begin.
    await new Promise((r) => setTimeout(r, 50));
    let n = 0;
    const write = async () => {
      await repo.insert(
        openedTicket(
          { orgId: 'acme', content: `ticket ${++n}`, authorName: null, idempotencyKey: null },
          new Date(),
        ),
        (t) => [ticketCreated(t)],
      );
      relay.notify();
    };
    return { publisher, write };
  }

  // The linger is far longer than the gap between the writes, so that a slow write on a loaded
  // machine (the embedded store syncs to disk) still lands inside it.
  it('when two writes come 30 ms apart and the relay lingers 400 ms, then both events leave in one batch, no sooner than the linger', async () => {
    const { publisher, write } = await relayWith(400);
    const first = performance.now();
    await write();
    await new Promise((r) => setTimeout(r, 30));
    await write();
    await eventually(
      async () => publisher.batches.flatMap((b) => b.ids).length === 2 || undefined,
      5_000,
      'both events',
    );
    assert.equal(publisher.batches.length, 1, 'one batch');
    assert.ok(publisher.batches[0]!.at - first >= 390, 'not before the linger was over');
  });

  it('when two writes come 30 ms apart and the relay does not linger, then each wakes the relay and leaves at once', async () => {
    const { publisher, write } = await relayWith(0);
    const first = performance.now();
    await write();
    await eventually(async () => publisher.batches.length === 1 || undefined, 5_000, 'the first');
    // The relay's poll is a minute: anything well under it was a wake-up, however loaded the
    // machine is.
    assert.ok(publisher.batches[0]!.at - first < 2_000, 'the write woke the relay');
    await new Promise((r) => setTimeout(r, 30));
    await write();
    await eventually(async () => publisher.batches.length === 2 || undefined, 5_000, 'the second');
    assert.deepEqual(
      publisher.batches.map((b) => b.ids.length),
      [1, 1],
    );
  });
});
