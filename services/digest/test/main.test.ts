// The process entry point: refuses to start without its backends, starts embedded, stops on SIGTERM.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { freePort } from '../../../test/support/backends.js';
import { assertGracefulStop, runMain, waitUntilServing } from '../../../test/support/process.js';
import { digestClient, newOrg } from './helpers.js';

describe('main', () => {
  const dirs: string[] = [];
  after(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));

  it('when started alone without MYSQL_URL and NATS_URL, then it exits 1 with a message naming both', async () => {
    const run = runMain('digest', {});
    assert.equal(await run.exited, 1);
    const { stderr } = run.output();
    assert.match(stderr, /digest: failed to start: invalid configuration:/);
    assert.match(stderr, /MYSQL_URL: MYSQL_URL is required \(set it, or EMBEDDED=true/);
    assert.match(stderr, /NATS_URL: NATS_URL is required/);
  });

  it('when a setting is invalid, then it exits 1 naming it', async () => {
    const run = runMain('digest', { EMBEDDED: 'true', DIGEST_SCHEDULE_TIME: '24:00' });
    assert.equal(await run.exited, 1);
    assert.match(run.output().stderr, /DIGEST_SCHEDULE_TIME: expected HH:MM/);
  });

  it('when started embedded, then it serves, reports healthy and metrics, and exits 0 on SIGTERM after a graceful stop', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'digest-main-'));
    dirs.push(dataDir);
    const [port, metricsPort] = [await freePort(), await freePort()];
    const run = runMain('digest', {
      EMBEDDED: 'true',
      DATA_DIR: dataDir,
      DIGEST_ADDR: `127.0.0.1:${port}`,
      DIGEST_METRICS_PORT: String(metricsPort),
      KNOWLEDGE_ADDR: '127.0.0.1:1',
      LOG_LEVEL: 'info',
    });
    try {
      await waitUntilServing(run, `127.0.0.1:${port}`, 'supportagent.digest.v1.DigestService');
      const client = digestClient(port);
      assert.equal((await client.getLatestDigest({ orgId: newOrg() })).digest, undefined);
      client.close();
      const metrics = await (await fetch(`http://127.0.0.1:${metricsPort}/metrics`)).text();
      for (const name of [
        'digest_consumer_pending',
        'digest_events_processed_total',
        'digest_events_redelivered_total',
        'digest_events_duplicate_total',
      ]) {
        assert.match(metrics, new RegExp(`^# TYPE ${name} (gauge|counter)$`, 'm'));
        assert.match(metrics, new RegExp(`^${name} -?\\d+$`, 'm'));
      }
      await assertGracefulStop(run, 'digest service stopped');
    } finally {
      run.child.kill('SIGKILL');
    }
  });
});
