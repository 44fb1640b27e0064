// Embedded first start: the demo organization's KB reaches the knowledge service in the
// background, whenever that service comes up, exactly once across restarts.
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { freePort } from '../../../test/support/backends.js';
import { DEMO_KB } from '../src/domain/demo-kb.js';
import { startFakeUpstreams, type FakeUpstreams } from './support/fake-upstreams.js';
import { request, startGateway, type TestGateway } from './support/gateway.js';

let upstreams: FakeUpstreams;
const cleanup: Array<() => Promise<void> | void> = [];

function tempDir(): string {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'gw-demo-kb-'));
  cleanup.push(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

/** An embedded gateway whose knowledge service is at knowledgeAddr (the rest: the fake). */
async function embedded(dataDir: string, knowledgeAddr: string): Promise<TestGateway> {
  const gw = await startGateway({
    EMBEDDED: 'true',
    DATA_DIR: dataDir,
    ADMIN_TOKEN: undefined,
    UPSTREAM: upstreams.address,
    KNOWLEDGE_ADDR: knowledgeAddr,
  });
  cleanup.push(() => gw.stop());
  return gw;
}

function marker(dataDir: string): { state: string; note?: string } {
  return JSON.parse(readFileSync(path.join(dataDir, 'gateway', 'demo-kb.json'), 'utf8'));
}

async function within<T>(ms: number, promise: Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`not settled within ${ms} ms`)), ms);
  });
  try {
    return await Promise.race([promise, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

before(async () => {
  upstreams = await startFakeUpstreams();
});

after(async () => {
  for (const step of cleanup.reverse()) await step();
  await upstreams?.stop();
});

describe('demo KB on an embedded first start', () => {
  it('when the knowledge service starts after the gateway, then the demo KB is loaded in the background, once', async () => {
    const dataDir = tempDir();
    const port = await freePort();
    const started = Date.now();
    const first = await embedded(dataDir, `127.0.0.1:${port}`);
    assert.ok(Date.now() - started < 3_000, 'start-up does not wait for the knowledge service');
    assert.ok(first.handle.demo && first.handle.demoKb);
    assert.equal((await request(`${first.base}/readyz`)).status, 200);
    assert.equal(marker(dataDir).state, 'pending');

    await new Promise((r) => setTimeout(r, 300));
    const late: FakeUpstreams = await startFakeUpstreams({ port });
    cleanup.push(() => late.stop());
    assert.equal(await within(20_000, first.handle.demoKb.done), 'loaded');

    assert.ok(late.calls.countEntries.length >= 1);
    assert.equal(late.calls.upsertEntries.length, 1);
    const sent = late.calls.upsertEntries[0]!;
    assert.equal(sent.orgId, 'demo');
    assert.deepEqual(
      sent.entries.map((e) => e.id),
      DEMO_KB.map((e) => e.id),
    );
    assert.equal(late.kb.get('demo')?.size, DEMO_KB.length);
    assert.deepEqual(marker(dataDir), {
      ...marker(dataDir),
      state: 'loaded',
      note: `loaded ${DEMO_KB.length} of ${DEMO_KB.length} entries`,
    });
    await first.stop();

    // Even with the demo KB emptied meanwhile, a restart does not load it again.
    late.kb.get('demo')!.clear();
    late.reset();
    const second = await embedded(dataDir, `127.0.0.1:${port}`);
    assert.equal(second.handle.demo, undefined);
    assert.equal(second.handle.demoKb, undefined);
    await new Promise((r) => setTimeout(r, 300));
    assert.equal(late.calls.countEntries.length + late.calls.upsertEntries.length, 0);
  });

  it('when the gateway restarts before the knowledge service took the demo KB, then the next start loads it', async () => {
    const dataDir = tempDir();
    const nowhere = `127.0.0.1:${await freePort()}`;
    const first = await embedded(dataDir, nowhere);
    assert.ok(first.handle.demoKb);
    await first.stop();
    assert.equal(await first.handle.demoKb.done, 'stopped');
    assert.equal(marker(dataDir).state, 'pending');

    const live = await startFakeUpstreams();
    cleanup.push(() => live.stop());
    const second = await embedded(dataDir, live.address);
    assert.equal(second.handle.demo, undefined, 'the demo organization is not created again');
    assert.ok(second.handle.demoKb);
    assert.equal(await within(10_000, second.handle.demoKb.done), 'loaded');
    assert.equal(live.kb.get('demo')?.size, DEMO_KB.length);
    assert.equal(marker(dataDir).state, 'loaded');
  });

  it('when the demo organization already has entries, then the demo KB is not imported', async () => {
    const dataDir = tempDir();
    const populated = await startFakeUpstreams();
    cleanup.push(() => populated.stop());
    populated.kb.set(
      'demo',
      new Map([['mine', { id: 'mine', question: 'Mine?', answer: 'Yes.', tags: [] }]]),
    );
    const gw = await embedded(dataDir, populated.address);
    assert.equal(await within(10_000, gw.handle.demoKb!.done), 'already-populated');
    assert.equal(populated.calls.upsertEntries.length, 0);
    assert.deepEqual([...populated.kb.get('demo')!.keys()], ['mine']);
    assert.equal(marker(dataDir).state, 'loaded');
  });
});
