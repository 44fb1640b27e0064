// Graceful shutdown: readiness fails first, in-flight requests finish, then the listener closes.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, it } from 'node:test';
import { startFakeUpstreams, type FakeUpstreams } from './support/fake-upstreams.js';
import { request, startGateway } from './support/gateway.js';

let upstreams: FakeUpstreams;
let dataDir: string;

before(async () => {
  upstreams = await startFakeUpstreams();
  dataDir = mkdtempSync(path.join(os.tmpdir(), 'gw-lifecycle-'));
});
after(async () => {
  await upstreams?.stop();
  rmSync(dataDir, { recursive: true, force: true });
});

it('when stop() is called, then readiness fails at once, in-flight requests complete and new connections are refused', async () => {
  const gw = await startGateway({
    EMBEDDED: 'true',
    DATA_DIR: dataDir,
    UPSTREAM: upstreams.address,
    SHUTDOWN_DELAY_MS: '400',
  });
  const key = gw.handle.demo!.key;
  assert.equal((await request(`${gw.base}/readyz`)).status, 200);

  upstreams.delayMs = 700;
  const inFlight = request(`${gw.base}/api/v1/agent/kb/search?query=slow`, { key });
  await new Promise((r) => setTimeout(r, 150));
  const stopping = gw.stop();

  const ready = await request(`${gw.base}/readyz`);
  assert.equal(ready.status, 503);
  assert.equal(ready.json.status, 'not_ready');
  assert.equal((await request(`${gw.base}/healthz`)).status, 200, 'still alive while draining');

  const slow = await inFlight;
  assert.equal(slow.status, 200, 'the in-flight request finished');
  await stopping;
  upstreams.delayMs = 0;
  await assert.rejects(fetch(`${gw.base}/healthz`));
});
