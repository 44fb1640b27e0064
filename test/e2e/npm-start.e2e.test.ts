// End-to-end: `npm start` (scripts/start.mjs) on a fresh data dir brings up every
// service on embedded adapters, creates the demo organization and prints a demo
// key once; a restart keeps data and prints no new key.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import {
  chmodSync,
  existsSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  writeFileSync,
} from 'node:fs';
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

/** Every path under `dir` whose mode is not owner-only (folders 0700, files 0600). */
function notPrivate(dir: string): string[] {
  const wrong: string[] = [];
  const walk = (p: string): void => {
    const st = lstatSync(p);
    const mode = st.mode & 0o777;
    if (st.isDirectory()) {
      if (mode !== 0o700) wrong.push(`${p} ${mode.toString(8)}`);
      for (const name of readdirSync(p)) walk(join(p, name));
    } else if (st.isFile() && mode !== 0o600) {
      wrong.push(`${p} ${mode.toString(8)}`);
    }
  };
  walk(dir);
  return wrong;
}

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
  // A DATA_DIR left world-readable (by an older version, or made by hand) is tightened on start.
  chmodSync(dataDir, 0o755);
  mkdirSync(join(dataDir, 'leftover'), { mode: 0o755 });
  writeFileSync(join(dataDir, 'leftover', 'notes.txt'), 'x', { mode: 0o644 });
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
  // Every tenant's tickets, the cursor signing secret, the admin token: owner-only.
  assert.deepEqual(notPrivate(dataDir), [], 'DATA_DIR 0700, every folder 0700, every file 0600');
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
  assert.deepEqual(notPrivate(dataDir), []);
  assert.equal(await second.stop(), 0);
});
