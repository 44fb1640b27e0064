// A silent Redis is treated like a dead one. Redis holds the rate limits and the idempotency
// lock, both with an in-process fallback that starts when Redis is refused; a Redis that
// accepts nothing and answers nothing (frozen with SIGSTOP here: the kernel still completes
// connects, no byte ever comes back, exactly as behind a blackhole) made every request wait
// for each of its commands to time out. With the fail-fast client (failFastRedisOptions) the
// share of ticket creations, searches and listings answered with a success within 1 s while
// Redis is frozen stays ≥ 0.95, and everything works again soon after it resumes.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freezeProcess, startRedis, type RedisHandle } from '../support/backends.js';
import { SHORT_KB } from '../support/kb.js';
import { ALL_SCOPES, Stack } from '../support/stack.js';
import { availability, SteadyLoad, type Op } from '../support/steady-load.js';

const ORG = 'silent-redis-org';
const FROZEN_MS = 8_000;
const OPS: Op[] = ['create', 'search', 'list'];
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

let dir: string;
let redis: RedisHandle;
let stack: Stack;
let key: string;

before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'silent-redis-'));
  redis = await startRedis(join(dir, 'redis'));
  stack = await Stack.onTestBackends('silent-redis', {
    redisUrl: redis.url,
    services: ['tickets', 'knowledge'],
    env: { GRPC_DEADLINE_MS: '2500', DIGEST_SCHEDULER_ENABLED: 'false' },
  });
  key = await stack.orgWithKey(ORG, ALL_SCOPES, {
    rate_limit_per_key_per_min: 1_000_000,
    rate_limit_per_org_per_min: 1_000_000,
  });
  await stack.admin('POST', `/admin/v1/orgs/${ORG}/kb/entries`, SHORT_KB.slice(0, 2));
});

after(async () => {
  if (redis?.pid) redis.kill('SIGCONT');
  await stack?.stop();
  await redis?.stop();
  if (dir && process.env.KEEP_TEST_TMP !== '1') rmSync(dir, { recursive: true, force: true });
});

test('when Redis goes silent under load, then creations, searches and listings stay available within 1 s and recover after it answers again', async () => {
  const load = new SteadyLoad({
    gateways: { count: 1, url: () => stack.baseUrl(0), isDown: () => false, epoch: () => 0 },
    key,
    workers: 3,
    timeoutMs: 4_500,
    paceMs: 20,
    questions: SHORT_KB.slice(0, 2).map((e) => e.question),
    ops: OPS,
  });
  load.start();
  await sleep(1_500);
  load.phase = 'redis silent';
  await freezeProcess(redis.pid!);
  await sleep(FROZEN_MS);
  load.phase = 'recovering';
  redis.kill('SIGCONT');
  const back = Math.max(...(await Promise.all(OPS.map((op) => load.probe(op, 10_000)))));
  await load.stop();

  const silent = load.phases.get('redis silent');
  const shares = OPS.map((op) => `${op} ${availability(silent, op)?.toFixed(2)}`).join(', ');
  console.log(
    `silent Redis (${FROZEN_MS / 1000} s): availability ${shares}; back after ${back} ms`,
  );
  assert.deepEqual(load.violations, []);
  assert.equal(load.lost, 0);
  assert.equal(load.duplicates, 0);
  for (const op of OPS) {
    const a = availability(silent, op);
    assert.ok(a !== undefined && a >= 0.95, `${op}: availability ${a} while Redis is silent`);
  }
  assert.ok(back <= 10_000, `operations back after ${back} ms`);
});
