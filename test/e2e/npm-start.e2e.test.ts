// End-to-end: `npm start` (scripts/start.mjs) on a fresh data dir brings up every
// service on embedded adapters, creates the demo organization and prints a demo
// key once; a restart keeps data and prints no new key.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { freePort, api, waitFor } from '../support/stack.js';

const ROOT = resolve(new URL('../..', import.meta.url).pathname);
const dataDir = mkdtempSync(join(tmpdir(), 'e2e-npm-start-'));
let child: ChildProcess | undefined;

async function launch(
  env: Record<string, string>,
): Promise<{ output: () => string; stop: () => Promise<number | null> }> {
  let output = '';
  child = spawn(process.execPath, [join(ROOT, 'scripts/start.mjs')], {
    cwd: ROOT,
    env: { PATH: process.env.PATH ?? '', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  child.stdout!.on('data', (d: Buffer) => (output += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (output += d.toString()));
  const proc = child;
  return {
    output: () => output,
    stop: () =>
      new Promise((done) => {
        proc.once('exit', (code) => done(code));
        proc.kill('SIGTERM');
      }),
  };
}

after(() => {
  child?.kill('SIGKILL');
});

test('when npm start runs on a fresh machine, then the demo key works and survives a restart', async () => {
  const port = await freePort();
  const env = {
    DATA_DIR: dataDir,
    PORT: String(port),
    ADMIN_PORT: String(await freePort()),
    TICKETS_ADDR: `127.0.0.1:${await freePort()}`,
    LOG_LEVEL: 'warn',
  };
  const base = `http://127.0.0.1:${port}`;
  const first = await launch(env);
  const keyPattern = /sak_live_[0-9A-Za-z]{38}/;
  await waitFor(
    () => keyPattern.test(first.output()),
    60_000,
    () => `no demo key printed:\n${first.output()}`,
  );
  const key = first.output().match(keyPattern)![0];
  await waitFor(
    async () => (await fetch(`${base}/readyz`).catch(() => undefined))?.status === 200,
    30_000,
  );
  const created = await api(base, 'POST', '/api/v1/agent/tickets', {
    key,
    body: { content: 'hello from the demo' },
  });
  assert.equal(created.status, 201);
  assert.ok(
    existsSync(join(dataDir, 'admin-token')),
    'the generated admin token is saved for the CLI',
  );
  assert.equal(await first.stop(), 0, 'the launcher exits cleanly on SIGTERM');

  const second = await launch(env);
  await waitFor(
    async () => (await fetch(`${base}/readyz`).catch(() => undefined))?.status === 200,
    60_000,
    () => second.output(),
  );
  const list = await api(base, 'GET', '/api/v1/agent/tickets', { key });
  assert.equal(list.status, 200);
  assert.equal(list.json.tickets[0].content, 'hello from the demo');
  assert.ok(!keyPattern.test(second.output()), 'no new demo key on a later start');
  assert.ok(readFileSync(join(dataDir, 'admin-token'), 'utf8').trim().length >= 32);
  assert.equal(await second.stop(), 0);
});
