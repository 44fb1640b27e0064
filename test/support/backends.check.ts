// Smoke check for the backend harness: `npx tsx test/support/backends.check.ts`.
// Starts MariaDB, Redis and NATS, checks each, crashes (kill -9) and restarts each, checks
// again, stops everything and verifies that none of the servers it started is still alive.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  controlBackend,
  ensureBackendPackages,
  readBackendsState,
  startBackends,
  writeBackendsState,
  type Backends,
} from './backends.js';

function check(condition: unknown, message: string): asserts condition {
  if (!condition) throw new Error(`check failed: ${message}`);
}

/** SELECT 1 over TCP as the app user, through the mysql client, as the services will connect. */
function mysqlSelect1(url: string): void {
  const u = new URL(url);
  const result = spawnSync(
    'mariadb',
    [
      '--no-defaults',
      '--protocol=TCP',
      `--host=${u.hostname}`,
      `--port=${u.port}`,
      `--user=${u.username}`,
      `--password=${u.password}`,
      '--batch',
      '--skip-column-names',
      '-e',
      'SELECT 1',
      u.pathname.slice(1),
    ],
    { encoding: 'utf8', timeout: 10_000 },
  );
  check(result.status === 0 && result.stdout.trim() === '1', `mysql SELECT 1: ${result.stderr}`);
}

/** Sends `send` (if any) and returns the first line the server answers with. */
function firstLine(port: number, send?: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = net.connect({ host: '127.0.0.1', port }, () => send && socket.write(send));
    let buffer = '';
    socket.setTimeout(5_000, () => socket.destroy(new Error('timeout')));
    socket.on('error', reject);
    socket.setEncoding('utf8').on('data', (chunk: string) => {
      buffer += chunk;
      if (buffer.includes('\r\n')) {
        socket.destroy();
        resolve(buffer.slice(0, buffer.indexOf('\r\n')));
      }
    });
  });
}

async function checkAll(backends: Backends, label: string): Promise<void> {
  mysqlSelect1(backends.mysql.url);
  check((await backends.mysql.adminExec('SELECT 2')).trim() === '2', 'adminExec');
  check((await firstLine(backends.redis.port, 'PING\r\n')) === '+PONG', 'redis PING');
  const info = await firstLine(backends.nats.port);
  check(info.startsWith('INFO ') && info.includes('"jetstream":true'), `nats INFO: ${info}`);
  console.log(`ok   ${label}: mysql, redis, nats respond`);
}

function isRunning(pid: number): boolean {
  const ps = spawnSync('ps', ['-o', 'stat=', '-p', String(pid)], { encoding: 'utf8' });
  return ps.status === 0 && !ps.stdout.trim().startsWith('Z');
}

/** Subprocess mode: kill -9 and restart one backend from the state file, print the new pid. */
async function restartFromState(stateFile: string, name: 'mysql' | 'redis' | 'nats') {
  const control = controlBackend(readBackendsState(stateFile), name);
  control.kill('SIGKILL');
  await control.start();
  console.log(control.pid);
}

async function main(): Promise<void> {
  await ensureBackendPackages();
  const dir = mkdtempSync(path.join(os.tmpdir(), 'support-agent-check-'));
  const seenPids = new Set<number>();
  let backends: Backends | undefined;
  try {
    backends = await startBackends(dir);
    const all = [backends.mysql, backends.redis, backends.nats];
    all.forEach((h) => seenPids.add(h.pid));
    console.log(`started ${all.map((h) => `${h.name}:${h.port} (pid ${h.pid})`).join(', ')}`);
    await checkAll(backends, 'fresh');

    // Data written before a crash: the app database survives a MariaDB kill -9.
    await backends.mysql.adminExec(
      'CREATE TABLE support_agent.t (id INT PRIMARY KEY); INSERT INTO support_agent.t VALUES (7);',
    );

    // Crash and restart through the handles (the process that started the servers).
    for (const handle of [backends.nats, backends.redis, backends.mysql]) {
      const before = handle.pid;
      handle.kill('SIGKILL');
      await handle.restart();
      check(handle.pid !== 0 && handle.pid !== before, `${handle.name} got a new pid`);
      seenPids.add(handle.pid);
    }
    await checkAll(backends, 'after kill -9 + restart (handles)');
    const kept = await backends.mysql.adminExec('SELECT id FROM support_agent.t');
    check(kept.trim() === '7', 'mysql data survives kill -9');

    // Crash and restart through the state file from another process, as a test would.
    const stateFile = path.join(dir, 'backends.json');
    writeBackendsState(stateFile, backends);
    for (const name of ['nats', 'redis', 'mysql'] as const) {
      const before = readBackendsState(stateFile)[name].pid;
      const result = spawnSync(
        process.execPath,
        ['--import', 'tsx', fileURLToPath(import.meta.url), '--restart', stateFile, name],
        { encoding: 'utf8', timeout: 60_000 },
      );
      check(result.status === 0, `restart ${name} in a subprocess: ${result.stderr}`);
      const after = Number(result.stdout.trim());
      check(after > 0 && after !== before && isRunning(after), `${name} restarted via state file`);
      seenPids.add(after);
    }
    await checkAll(backends, 'after kill -9 + restart (state file)');

    // The owner's handles must see (and later stop) servers restarted by someone else.
    check(
      backends.nats.pid === controlBackend(readBackendsState(stateFile), 'nats').pid,
      'handle tracks new nats pid',
    );
  } finally {
    await backends?.stop();
    rmSync(dir, { recursive: true, force: true });
  }
  const leftovers = [...seenPids].filter(isRunning);
  check(leftovers.length === 0, `servers still running: ${leftovers.join(', ')}`);
  console.log(`ok   all stopped (${seenPids.size} server processes seen)`);
  console.log('OK');
}

const [mode, stateArg, nameArg] = process.argv.slice(2);
const run =
  mode === '--restart'
    ? () => restartFromState(stateArg!, nameArg as 'mysql' | 'redis' | 'nats')
    : main;
run().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
