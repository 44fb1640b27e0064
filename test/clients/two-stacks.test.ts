// Two complete `npm start` stacks on one machine, each moved with one variable (PORT_BASE) and
// given its own DATA_DIR: both start, answer /healthz, search their demo knowledge base and
// create a ticket, without touching each other's ports; metrics listen on loopback only.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import net from 'node:net';
import { networkInterfaces, tmpdir } from 'node:os';
import { join } from 'node:path';
import { api, waitFor } from '../support/stack.js';
import { removeDir, ROOT } from './support/clients.js';

/** Every listener of a stack sits at PORT_BASE + one of these (packages/shared/src/ports.ts). */
const OFFSETS = [0, 1, 11, 12, 13, 14, 21, 22, 23, 24, 25];
const METRICS_OFFSETS = [21, 22, 23, 24, 25];

interface Started {
  base: number;
  dataDir: string;
  child: ChildProcess;
  output: () => string;
}

const stacks: Started[] = [];

function canListen(port: number, host: string): Promise<boolean> {
  return new Promise((resolve) => {
    const server = net.createServer();
    server.once('error', () => resolve(false));
    server.listen(port, host, () => server.close(() => resolve(true)));
  });
}

/** A PORT_BASE whose whole layout is free now (on every address), other than `not`. */
async function freeBase(not: number[] = []): Promise<number> {
  for (let attempt = 0; attempt < 50; attempt++) {
    const base = 20_000 + Math.floor(Math.random() * 1_500) * 26;
    if (not.some((b) => Math.abs(b - base) < 26)) continue;
    let free = true;
    for (const offset of OFFSETS) free &&= await canListen(base + offset, '0.0.0.0');
    if (free) return base;
  }
  throw new Error('no free port range');
}

function startStack(base: number): Started {
  let output = '';
  const dataDir = mkdtempSync(join(tmpdir(), `clients-stack-${base}-`));
  const child = spawn(process.execPath, [join(ROOT, 'scripts/start.mjs')], {
    cwd: ROOT,
    env: {
      PATH: process.env.PATH ?? '',
      PORT_BASE: String(base),
      DATA_DIR: dataDir,
      LOG_LEVEL: 'warn',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  child.stdout!.on('data', (c: Buffer) => (output += c.toString()));
  child.stderr!.on('data', (c: Buffer) => (output += c.toString()));
  const started = { base, dataDir, child, output: () => output };
  stacks.push(started);
  return started;
}

/** The demo key the gateway prints on a first start. */
function demoKey(s: Started): string | undefined {
  return /sak_live_[A-Za-z0-9]{38}/.exec(s.output())?.[0];
}

before(async () => {
  const a = await freeBase();
  const b = await freeBase([a]);
  startStack(a);
  startStack(b);
});

after(async () => {
  await Promise.all(
    stacks.map(
      (s) =>
        new Promise<void>((resolve) => {
          if (s.child.exitCode !== null) return resolve();
          const timer = setTimeout(() => s.child.kill('SIGKILL'), 20_000);
          s.child.once('exit', () => {
            clearTimeout(timer);
            resolve();
          });
          s.child.kill('SIGTERM');
        }),
    ),
  );
  for (const s of stacks) removeDir(s.dataDir);
});

test('when two stacks start with PORT_BASE=A and PORT_BASE=B, then each serves search and ticket creation on its own ports', async () => {
  for (const s of stacks) {
    const url = `http://127.0.0.1:${s.base}`;
    await waitFor(
      async () => (await api(url, 'GET', '/readyz').catch(() => ({ status: 0 }))).status === 200,
      60_000,
      () => `stack ${s.base} not ready:\n${s.output().slice(-3000)}`,
    );
    const health = await api(url, 'GET', '/healthz');
    assert.equal(health.status, 200);
    const key = demoKey(s);
    assert.ok(key, `stack ${s.base} printed no demo key:\n${s.output().slice(-2000)}`);
    // The demo knowledge base is loaded in the background after the first start.
    let results: unknown[] = [];
    await waitFor(
      async () => {
        const res = await api(url, 'GET', '/api/v1/agent/kb/search?query=reset+password', { key });
        results = res.status === 200 ? res.json.results : [];
        return results.length > 0;
      },
      60_000,
      () => `stack ${s.base}: no search results`,
    );
    const created = await api(url, 'POST', '/api/v1/agent/tickets', {
      key,
      body: { content: `Hello from the stack on ${s.base}` },
    });
    assert.equal(created.status, 201, created.text);
    assert.equal(created.json.ticket_id, 1, 'each stack has its own data');
  }
  assert.notEqual(demoKey(stacks[0]!), demoKey(stacks[1]!));
});

test('when the stacks run, then every metrics endpoint answers on 127.0.0.1 only', async () => {
  const external = Object.values(networkInterfaces())
    .flat()
    .find((i) => i && i.family === 'IPv4' && !i.internal)?.address;
  for (const s of stacks) {
    for (const offset of METRICS_OFFSETS) {
      const res = await fetch(`http://127.0.0.1:${s.base + offset}/metrics`);
      assert.equal(res.status, 200, `${s.base + offset}`);
      await res.text();
      // Bound to loopback: the same port is still free on another address of this machine.
      if (external) assert.ok(await canListen(s.base + offset, external), `${s.base + offset}`);
    }
  }
});
