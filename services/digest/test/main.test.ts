// The process entry point: refuses to start without its backends, starts embedded, stops on SIGTERM.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, describe, it } from 'node:test';
import { checkHealth } from '@support-agent/shared';
import { freePort } from '../../../test/support/backends.js';
import { digestClient, newOrg } from './helpers.js';

const MAIN = fileURLToPath(new URL('../src/main.ts', import.meta.url));

function runMain(env: Record<string, string>) {
  const child = spawn(process.execPath, ['--import', 'tsx', MAIN], {
    env: { PATH: process.env.PATH ?? '', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  return { child, exited, output: () => ({ stdout, stderr }) };
}

describe('main', () => {
  const dirs: string[] = [];
  after(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));

  it('when started alone without MYSQL_URL and NATS_URL, then it exits 1 with a message naming both', async () => {
    const run = runMain({});
    assert.equal(await run.exited, 1);
    const { stderr } = run.output();
    assert.match(stderr, /digest: failed to start: invalid configuration:/);
    assert.match(stderr, /MYSQL_URL: MYSQL_URL is required \(set it, or EMBEDDED=true/);
    assert.match(stderr, /NATS_URL: NATS_URL is required/);
  });

  it('when a setting is invalid, then it exits 1 naming it', async () => {
    const run = runMain({ EMBEDDED: 'true', DIGEST_SCHEDULE_TIME: '24:00' });
    assert.equal(await run.exited, 1);
    assert.match(run.output().stderr, /DIGEST_SCHEDULE_TIME: expected HH:MM/);
  });

  it('when started embedded, then it serves, reports healthy and metrics, and exits 0 on SIGTERM after a graceful stop', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'digest-main-'));
    dirs.push(dataDir);
    const [port, metricsPort] = [await freePort(), await freePort()];
    const run = runMain({
      EMBEDDED: 'true',
      DATA_DIR: dataDir,
      DIGEST_ADDR: `127.0.0.1:${port}`,
      DIGEST_METRICS_PORT: String(metricsPort),
      KNOWLEDGE_ADDR: '127.0.0.1:1',
      LOG_LEVEL: 'info',
    });
    try {
      const until = Date.now() + 20_000;
      while (!(await checkHealth(`127.0.0.1:${port}`, 'supportagent.digest.v1.DigestService'))) {
        assert.ok(Date.now() < until, `service did not become healthy: ${run.output().stderr}`);
        await new Promise((r) => setTimeout(r, 100));
      }
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
      run.child.kill('SIGTERM');
      assert.equal(await run.exited, 0);
      const logs = run
        .output()
        .stdout.split('\n')
        .filter(Boolean)
        .map((l) => JSON.parse(l) as { msg: string; level: string });
      assert.ok(logs.some((l) => l.msg === 'digest service stopped'));
      assert.ok(
        logs.every((l) => l.level !== 'error'),
        'no errors logged',
      );
    } finally {
      run.child.kill('SIGKILL');
    }
  });
});
