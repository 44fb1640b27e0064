// Idempotency keys under concurrency, after a Redis flush, with Redis down and across replicas.
// Uses its own Redis server (FLUSHALL and stopping it must not disturb other test files).
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { Redis } from 'ioredis';
import { freePort, startRedis, type RedisHandle } from '../../../test/support/backends.js';
import { createTestDatabase } from '../../../test/support/mysql.js';
import { eventually, newOrg, requireEnv, startService, type TicketsClient } from './helpers.js';

const BURST = 50;

async function burst(client: TicketsClient, orgId: string, key: string, n = BURST) {
  return Promise.all(
    Array.from({ length: n }, (_, i) =>
      client.createTicket({ orgId, content: `attempt ${i}`, idempotencyKey: key }),
    ),
  );
}

async function countTickets(client: TicketsClient, orgId: string): Promise<number> {
  let n = 0;
  let cursor: string | undefined;
  do {
    const page = await client.listTickets({ orgId, limit: 20, cursor });
    n += page.tickets.length;
    cursor = page.nextCursor;
  } while (cursor);
  return n;
}

const cacheKey = (orgId: string, key: string) =>
  `idem:${orgId}:${createHash('sha256').update(key).digest('hex')}`;

describe('idempotency keys (MySQL + Redis)', () => {
  let db: Awaited<ReturnType<typeof createTestDatabase>>;
  let redisDir: string;
  let redisServer: RedisHandle;
  let redis: Redis;
  let service: Awaited<ReturnType<typeof startService>>;
  let env: Record<string, string>;

  before(async () => {
    db = await createTestDatabase('tickets_idem');
    redisDir = mkdtempSync(join(tmpdir(), 'tickets-redis-'));
    redisServer = await startRedis(redisDir);
    redis = new Redis(redisServer.url, { maxRetriesPerRequest: 1 });
    redis.on('error', () => undefined); // the test stops this server on purpose
    env = { MYSQL_URL: db.url, REDIS_URL: redisServer.url, NATS_URL: requireEnv('TEST_NATS_URL') };
    service = await startService(env);
  });

  after(async () => {
    await service?.stop();
    redis?.disconnect();
    await redisServer?.stop();
    await db?.drop();
    if (redisDir) rmSync(redisDir, { recursive: true, force: true });
  });

  it('when 50 calls with one key run at once, then one ticket is created, 49 calls get it as duplicate, and the answer is cached', async () => {
    const orgId = newOrg();
    const results = await burst(service.client, orgId, 'same-key');
    const created = results.filter((r) => !r.duplicate);
    assert.equal(created.length, 1);
    assert.ok(results.every((r) => r.ticketId === created[0]!.ticketId));
    assert.equal(await countTickets(service.client, orgId), 1);
    assert.equal(await redis.get(cacheKey(orgId, 'same-key')), String(created[0]!.ticketId));
  });

  it('when Redis is flushed, then 50 more calls with the key all return the original ticket and create nothing', async () => {
    const orgId = newOrg();
    const [first] = await burst(service.client, orgId, 'flush-key', 1);
    await redis.flushall();
    const results = await burst(service.client, orgId, 'flush-key');
    assert.ok(results.every((r) => r.duplicate && r.ticketId === first!.ticketId));
    assert.equal(await countTickets(service.client, orgId), 1);
    // The cache is rebuilt from the database.
    assert.equal(await redis.get(cacheKey(orgId, 'flush-key')), String(first!.ticketId));
  });

  it('when a key is used in two orgs at once, then each org gets exactly one ticket', async () => {
    const [a, b] = [newOrg(), newOrg()];
    const [ra, rb] = await Promise.all([
      burst(service.client, a, 'both'),
      burst(service.client, b, 'both'),
    ]);
    assert.equal(new Set(ra.map((r) => r.ticketId)).size, 1);
    assert.equal(new Set(rb.map((r) => r.ticketId)).size, 1);
    // Each org's first ticket, number 1 in each: two tickets.
    assert.deepEqual([ra[0]!.ticketId, rb[0]!.ticketId], [1, 1]);
    assert.equal(await countTickets(service.client, a), 1);
    assert.equal(await countTickets(service.client, b), 1);
  });

  it('when two replicas share the database, then 50 calls spread over both still create one ticket', async () => {
    const replica = await startService(env);
    try {
      const orgId = newOrg();
      const results = await Promise.all(
        Array.from({ length: BURST }, (_, i) =>
          (i % 2 ? replica.client : service.client).createTicket({
            orgId,
            content: `r${i}`,
            idempotencyKey: 'replicas',
          }),
        ),
      );
      assert.equal(new Set(results.map((r) => r.ticketId)).size, 1);
      assert.equal(results.filter((r) => !r.duplicate).length, 1);
      assert.equal(await countTickets(service.client, orgId), 1);
    } finally {
      await replica.stop();
    }
  });

  it("when the replica holding a key's lock died, then a creation retried with the key is answered within a gRPC deadline, once", async () => {
    const orgId = newOrg();
    const hash = createHash('sha256').update('orphaned').digest('hex');
    // What a replica killed between taking the lock and settling it leaves behind.
    await redis.set(`idem:lock:${orgId}:${hash}`, 'dead-replica', 'PX', 10_000);
    const t0 = Date.now();
    const [first] = await burst(service.client, orgId, 'orphaned', 1);
    const ms = Date.now() - t0;
    assert.ok(ms < 2_000, `answered after ${ms} ms`);
    assert.equal(first!.duplicate, false);
    const again = await burst(service.client, orgId, 'orphaned', 5);
    assert.ok(again.every((r) => r.duplicate && r.ticketId === first!.ticketId));
    assert.equal(await countTickets(service.client, orgId), 1);
  });

  it('when Redis is down, then creates still succeed exactly once per key; when it is back, then the lock and cache are used again', async () => {
    await redisServer.stop();
    try {
      const orgId = newOrg();
      const results = await burst(service.client, orgId, 'no-redis');
      assert.equal(new Set(results.map((r) => r.ticketId)).size, 1);
      assert.equal(results.filter((r) => !r.duplicate).length, 1);
      const plain = await service.client.createTicket({ orgId, content: 'no key' });
      assert.equal(plain.duplicate, false);
      assert.equal(await countTickets(service.client, orgId), 2);
    } finally {
      await redisServer.restart();
    }
    const orgId = newOrg();
    await eventually(
      async () => {
        await service.client.createTicket({ orgId, content: 'x', idempotencyKey: 'redis-back' });
        return (await redis.get(cacheKey(orgId, 'redis-back'))) ?? undefined;
      },
      10_000,
      'the idempotency cache to be written again',
    );
    assert.equal(await countTickets(service.client, orgId), 1);
  });

  it('when Redis is unreachable from the start, then the service starts and creates exactly once', async () => {
    const deadRedis = `redis://127.0.0.1:${await freePort()}`;
    const isolated = await startService({ ...env, REDIS_URL: deadRedis });
    try {
      const orgId = newOrg();
      const results = await burst(isolated.client, orgId, 'never-redis', 20);
      assert.equal(new Set(results.map((r) => r.ticketId)).size, 1);
      assert.equal(results.filter((r) => !r.duplicate).length, 1);
    } finally {
      await isolated.stop();
    }
  });
});
