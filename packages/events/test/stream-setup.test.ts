// Making sure the stream exists when several processes start at once (the producer and every
// consumer call ensureTicketsStream when they connect), on a real NATS JetStream server.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { connect, type NatsConnection } from 'nats';
import { ALL_SUBJECTS, ensureTicketsStream, STREAM_NAME } from '@support-agent/events';
import { startNats, type NatsHandle } from '../../../test/support/backends.js';

describe('the tickets stream', () => {
  let dir: string;
  let nats: NatsHandle;
  const connections: NatsConnection[] = [];

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'events-stream-setup-'));
    nats = await startNats(join(dir, 'nats'));
    for (let i = 0; i < 8; i++) connections.push(await connect({ servers: nats.url }));
  });

  after(async () => {
    for (const nc of connections) await nc.close();
    await nats.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('when eight processes create the missing stream at the same moment, then every one succeeds and there is one stream', async () => {
    const managers = await Promise.all(connections.map((nc) => nc.jetstreamManager()));
    for (let round = 0; round < 20; round++) {
      await managers[0]!.streams.delete(STREAM_NAME).catch(() => undefined);
      const outcomes = await Promise.allSettled(
        managers.map((jsm, i) => ensureTicketsStream(jsm, { replicas: 1, update: i === 0 })),
      );
      const failed = outcomes.filter((o) => o.status === 'rejected');
      assert.deepEqual(
        failed.map((o) => String((o as PromiseRejectedResult).reason)),
        [],
        `round ${round}`,
      );
      const streams = await managers[0]!.streams.names().next();
      assert.deepEqual(streams, [STREAM_NAME]);
      const info = await managers[0]!.streams.info(STREAM_NAME);
      assert.deepEqual(info.config.subjects, [ALL_SUBJECTS]);
    }
  });
});
