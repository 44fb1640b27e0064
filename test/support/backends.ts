// Test-backend harness: runs throwaway MariaDB, Redis and NATS (JetStream) servers from the
// Debian packages, each in its own directory with its own port, for `npm test` and e2e tests.
//
// Ground rules (see /work/shared/TOOLCHAIN.md, "Backends"):
// - every server's stdout/stderr goes to a log file: a pipe held open by a background server
//   can hang whoever spawned it;
// - we only ever signal processes we started, by PID, and before signalling a PID we check
//   (via /proc/<pid>/cwd) that it still runs inside the backend's directory, so a stale PID
//   that the kernel has reused is never hit;
// - each server writes its own pid file, so the process that started the backends can still
//   stop a server that a test process killed and restarted (see controlBackend()).
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import {
  accessSync,
  closeSync,
  constants,
  mkdirSync,
  openSync,
  readFileSync,
  readdirSync,
  readlinkSync,
  realpathSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';

export type BackendName = 'mysql' | 'redis' | 'nats';

/** Everything needed to (re)start one server, also from another process. */
export interface ServerSpec {
  readonly name: BackendName;
  /** Directory owned by this backend; the server runs with its cwd inside it. */
  readonly dir: string;
  readonly url: string;
  readonly port: number;
  readonly command: string;
  readonly args: readonly string[];
  readonly logFile: string;
  /** Written by the server itself on every start. */
  readonly pidFile: string;
  /** MariaDB only: unix socket for root (admin) access. */
  readonly socket?: string;
}

export interface BackendHandle {
  readonly name: BackendName;
  readonly url: string;
  readonly port: number;
  /** PID of the currently running server (changes after restart()); 0 if none is running. */
  readonly pid: number;
  readonly dir: string;
  readonly spec: ServerSpec;
  /** SIGTERM, wait up to 10 s for exit, then SIGKILL. Safe to call when already stopped. */
  stop(): Promise<void>;
  /** Send a signal (default SIGKILL, i.e. simulate a crash) without waiting. */
  kill(signal?: NodeJS.Signals): void;
  /** SIGSTOP, then wait until every thread of the server has stopped (SIGCONT thaws it). */
  freeze(): Promise<void>;
  /** Stop (if still running) and start again on the same port and data; waits for readiness. */
  restart(): Promise<void>;
}

export interface MariaDbHandle extends BackendHandle {
  readonly name: 'mysql';
  /** Runs SQL as root over the unix socket; returns tab-separated rows without a header. */
  adminExec(sql: string): Promise<string>;
}
export interface RedisHandle extends BackendHandle {
  readonly name: 'redis';
}
export interface NatsHandle extends BackendHandle {
  readonly name: 'nats';
}

export interface Backends {
  mysql: MariaDbHandle;
  redis: RedisHandle;
  nats: NatsHandle;
  stop(): Promise<void>;
}

export interface BackendState extends ServerSpec {
  /** PID at the time the state was written; the pid file is authoritative afterwards. */
  readonly pid: number;
}

export interface BackendsState {
  readonly version: 1;
  readonly mysql: BackendState;
  readonly redis: BackendState;
  readonly nats: BackendState;
}

export interface BackendControl {
  readonly pid: number;
  kill(signal?: NodeJS.Signals): void;
  stop(): Promise<void>;
  /** Starts the server again (detached, logging to its log file) and waits for readiness. */
  start(): Promise<void>;
}

const READY_TIMEOUT_MS = 30_000;
const STOP_TIMEOUT_MS = 10_000;
const APT_PACKAGES = ['mariadb-server', 'redis-server', 'nats-server'];

// ---------------------------------------------------------------------------------------------
// Binaries and packages

/** Finds an executable in the given directories first, then on PATH. */
function findBinary(name: string, preferredDirs: string[] = []): string | undefined {
  const pathDirs = (process.env.PATH ?? '').split(path.delimiter).filter(Boolean);
  for (const dir of [...preferredDirs, ...pathDirs]) {
    const candidate = path.join(dir, name);
    try {
      accessSync(candidate, constants.X_OK);
      if (statSync(candidate).isFile()) return candidate;
    } catch {
      // not here; keep looking
    }
  }
  return undefined;
}

function requireBinary(name: string, preferredDirs: string[] = []): string {
  const found = findBinary(name, preferredDirs);
  if (!found) {
    throw new Error(`${name} not found (run ensureBackendPackages() or install ${APT_PACKAGES})`);
  }
  return found;
}

// /usr/sbin is often not on a non-root PATH, and that is where Debian puts the daemons.
const SBIN = ['/usr/sbin', '/usr/bin'];
const binaries = {
  mariadbd: () => requireBinary('mariadbd', SBIN),
  installDb: () => requireBinary('mariadb-install-db', SBIN),
  mariadbClient: () => requireBinary('mariadb', SBIN),
  redis: () => requireBinary('redis-server', SBIN),
  nats: () => requireBinary('nats-server', SBIN),
};

function missingBinaries(): string[] {
  const wanted = ['mariadbd', 'mariadb-install-db', 'mariadb', 'redis-server', 'nats-server'];
  return wanted.filter((name) => !findBinary(name, SBIN));
}

let aptUpdated = false;

/** Installs mariadb-server, redis-server and nats-server with apt if any binary is missing. */
export async function ensureBackendPackages(): Promise<void> {
  const missing = missingBinaries();
  if (missing.length === 0) return;
  if (process.getuid?.() !== 0) {
    throw new Error(
      `Missing ${missing.join(', ')}. Install them as root: ` +
        `apt-get install -y ${APT_PACKAGES.join(' ')}`,
    );
  }
  const logFile = path.join(os.tmpdir(), `support-agent-apt-${process.pid}.log`);
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
  console.error(
    `Installing ${APT_PACKAGES.join(' ')} (missing: ${missing.join(', ')}); log: ${logFile}`,
  );
  if (!aptUpdated) {
    await runLogged('apt-get', ['update'], logFile, env);
    aptUpdated = true;
  }
  await runLogged('apt-get', ['install', '-y', ...APT_PACKAGES], logFile, env);
  const stillMissing = missingBinaries();
  if (stillMissing.length > 0) {
    throw new Error(`apt-get install succeeded but ${stillMissing.join(', ')} still missing`);
  }
}

/** Runs a command to completion with output appended to logFile; throws with the log tail. */
async function runLogged(
  command: string,
  args: string[],
  logFile: string,
  env: NodeJS.ProcessEnv = process.env,
): Promise<void> {
  const fd = openSync(logFile, 'a');
  let child: ChildProcess;
  try {
    child = spawn(command, args, { stdio: ['ignore', fd, fd], env });
  } finally {
    closeSync(fd); // the child has its own copy of the descriptor
  }
  const code = await new Promise<number | string>((resolve) => {
    child.once('error', (err) => resolve(err.message));
    child.once('exit', (exitCode, signal) => resolve(exitCode ?? signal ?? 'unknown'));
  });
  if (code !== 0) {
    throw new Error(
      `${command} ${args.join(' ')} failed (${code}); log ${logFile}:\n${logTail(logFile)}`,
    );
  }
}

// ---------------------------------------------------------------------------------------------
// Small helpers

/** Returns a TCP port that was free on 127.0.0.1 a moment ago. */
export async function freePort(): Promise<number> {
  const [port] = await freePorts(1);
  return port!;
}

/**
 * Ports are drawn at random below Linux's ephemeral range (32768–60999 by default), not asked
 * of the kernel (`listen(0)`): a port the kernel hands out is one it also hands out as the local
 * port of outgoing connections, and the suites open thousands of them (to MariaDB, Redis, NATS
 * and each other), so a port picked that way and bound a moment later was now and then taken
 * (EADDRINUSE in CI). Drawn at random from 12,768 ports, two suites running at once rarely pick
 * the same one in the moment between the check and the bind.
 */
const PORT_RANGE = { first: 20_000, last: 32_767 };

/**
 * Ports this process has handed out, never drawn again: a port is free when drawn but its
 * holder binds it a moment later, so two draws of one start (a service's gRPC and metrics
 * ports) could name the same port (EADDRINUSE in CI). Forgotten when half the range is used.
 */
const handedOut = new Set<number>();

/** Several distinct free ports: all listeners stay open until every port is picked. */
async function freePorts(count: number): Promise<number[]> {
  const servers: net.Server[] = [];
  const ports: number[] = [];
  try {
    for (let tries = 0; ports.length < count; tries++) {
      if (tries >= 200) throw new Error(`no free port in ${PORT_RANGE.first}–${PORT_RANGE.last}`);
      const port =
        PORT_RANGE.first + Math.floor(Math.random() * (PORT_RANGE.last - PORT_RANGE.first + 1));
      if (ports.includes(port) || handedOut.has(port)) continue;
      const server = net.createServer();
      const bound = await new Promise<boolean>((resolve) => {
        server.once('error', () => resolve(false));
        server.listen(port, '127.0.0.1', () => resolve(true));
      });
      if (!bound) continue;
      servers.push(server);
      ports.push(port);
    }
    if (handedOut.size > (PORT_RANGE.last - PORT_RANGE.first) / 2) handedOut.clear();
    for (const port of ports) handedOut.add(port);
    return ports;
  } finally {
    await Promise.all(servers.map((s) => new Promise<void>((resolve) => s.close(() => resolve()))));
  }
}

function logTail(file: string, lines = 40): string {
  try {
    const text = readFileSync(file, 'utf8');
    return text.split('\n').slice(-lines).join('\n');
  } catch {
    return '(no log)';
  }
}

/** True if the PID exists and is not a zombie (a zombie has already exited). */
function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch (err) {
    // EPERM means it exists but belongs to someone else: not ours either way.
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
  const state = procState(`/proc/${pid}/stat`);
  return state !== undefined && state !== 'Z' && state !== 'X'; // undefined: vanished meanwhile
}

/** The state letter of a /proc stat file (R, S, T, Z, ...), or undefined if it is gone. */
function procState(statFile: string): string | undefined {
  try {
    const stat = readFileSync(statFile, 'utf8');
    const at = stat.lastIndexOf(')') + 2; // the command name in parentheses may hold anything
    return stat.slice(at, at + 1);
  } catch {
    return undefined;
  }
}

/**
 * True if PID is alive and runs inside `dir` (all three servers are started with their cwd in
 * their backend directory; mariadbd moves into its datadir). Guards against PID reuse.
 */
function isOurServer(pid: number, dir: string): boolean {
  if (!Number.isInteger(pid) || pid <= 0 || !isAlive(pid)) return false;
  if (process.platform !== 'linux') return true; // no /proc: trust the recorded PID
  try {
    const cwd = readlinkSync(`/proc/${pid}/cwd`);
    const root = realpathSync(dir);
    return cwd === root || cwd.startsWith(root + path.sep);
  } catch {
    return false;
  }
}

/** True if every thread of PID is stopped by a signal (or the process is gone). */
function allThreadsStopped(pid: number): boolean {
  if (process.platform !== 'linux') return true; // no /proc: nothing to wait on
  let tids: string[];
  try {
    tids = readdirSync(`/proc/${pid}/task`);
  } catch {
    return true; // exited
  }
  return tids.every((tid) => {
    const state = procState(`/proc/${pid}/task/${tid}/stat`);
    return state === undefined || state === 'T' || state === 'Z' || state === 'X';
  });
}

/**
 * SIGSTOP, then wait until every thread of `pid` has stopped. The signal is delivered
 * asynchronously: a multi-threaded process (nats-server's Go runtime, mariadbd, node) can still
 * run on another core for a moment after kill() returns and serve a request sent meanwhile.
 * SIGCONT thaws it.
 */
export async function freezeProcess(pid: number): Promise<void> {
  process.kill(pid, 'SIGSTOP');
  const until = Date.now() + STOP_TIMEOUT_MS;
  while (!allThreadsStopped(pid)) {
    if (Date.now() > until) throw new Error(`pid ${pid} did not stop on SIGSTOP`);
    await sleep(1);
  }
}

function readPidFile(file: string): number | undefined {
  try {
    const pid = Number.parseInt(readFileSync(file, 'utf8').trim(), 10);
    return Number.isInteger(pid) && pid > 0 ? pid : undefined;
  } catch {
    return undefined;
  }
}

/** Runs a short-lived command with optional stdin; resolves stdout, rejects with stderr. */
function capture(
  command: string,
  args: string[],
  opts: { input?: string; timeoutMs?: number } = {},
): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { stdio: ['pipe', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    const timer = setTimeout(() => child.kill('SIGKILL'), opts.timeoutMs ?? 60_000);
    child.once('error', (err) => {
      clearTimeout(timer);
      reject(err);
    });
    child.once('close', (code, signal) => {
      clearTimeout(timer);
      if (code === 0) resolve(stdout);
      else
        reject(new Error(`${path.basename(command)} failed (${code ?? signal}): ${stderr.trim()}`));
    });
    child.stdin.on('error', () => {}); // EPIPE if the command exits early; reported via 'close'
    child.stdin.end(opts.input ?? '');
  });
}

/** Connects to host:port, optionally sends `send`, resolves with the first line received. */
function tcpFirstLine(port: number, send?: string, timeoutMs = 2_000): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = net.connect({ host: '127.0.0.1', port });
    let buffer = '';
    const done = (err: Error | undefined, line?: string) => {
      socket.destroy();
      if (err) reject(err);
      else resolve(line ?? '');
    };
    socket.setTimeout(timeoutMs, () => done(new Error(`timeout talking to port ${port}`)));
    socket.once('error', (err) => done(err));
    socket.once('connect', () => {
      if (send) socket.write(send);
    });
    socket.setEncoding('utf8').on('data', (chunk: string) => {
      buffer += chunk;
      const eol = buffer.indexOf('\r\n');
      if (eol >= 0) done(undefined, buffer.slice(0, eol));
    });
    socket.once('end', () => done(new Error(`port ${port} closed the connection`)));
  });
}

// ---------------------------------------------------------------------------------------------
// Readiness probes: each throws until the server is usable.

function mariadbClientArgs(socket: string): string[] {
  return ['--no-defaults', `--socket=${socket}`, '--user=root', '--connect-timeout=2'];
}

async function adminQuery(socket: string, sql: string): Promise<string> {
  const args = [...mariadbClientArgs(socket), '--batch', '--skip-column-names'];
  return capture(binaries.mariadbClient(), args, { input: sql });
}

const probes: Record<BackendName, (spec: ServerSpec) => Promise<void>> = {
  async mysql(spec) {
    const out = await capture(
      binaries.mariadbClient(),
      [...mariadbClientArgs(spec.socket!), '--batch', '--skip-column-names', '-e', 'select 1'],
      { timeoutMs: 5_000 },
    );
    if (out.trim() !== '1') throw new Error(`unexpected reply to select 1: ${out}`);
  },
  async redis(spec) {
    const line = await tcpFirstLine(spec.port, 'PING\r\n');
    if (line !== '+PONG') throw new Error(`redis replied ${line}`); // e.g. -LOADING
  },
  async nats(spec) {
    const line = await tcpFirstLine(spec.port);
    if (!line.startsWith('INFO ')) throw new Error(`nats sent ${line}`);
  },
};

// ---------------------------------------------------------------------------------------------
// One server process: start, wait for readiness, stop. Used both by the process that created
// the backends (owned children) and by test processes via controlBackend() (detached children).

class ServerProcess {
  private child: ChildProcess | undefined;

  constructor(
    readonly spec: ServerSpec,
    private readonly detached: boolean,
    /** A PID recorded earlier (e.g. in the state file) that may still be running. */
    private readonly knownPid?: number,
  ) {}

  /** PIDs of this backend's servers that are still alive (normally zero or one). */
  livePids(): number[] {
    const candidates = [this.child?.pid, readPidFile(this.spec.pidFile), this.knownPid];
    const unique = [...new Set(candidates.filter((p): p is number => p !== undefined))];
    return unique.filter((pid) => isOurServer(pid, this.spec.dir));
  }

  get pid(): number {
    return this.livePids()[0] ?? 0;
  }

  async start(): Promise<void> {
    // A server killed a moment ago may still hold the port or the data dir lock.
    await this.waitForExit(STOP_TIMEOUT_MS);
    const running = this.livePids();
    if (running.length > 0) {
      throw new Error(`${this.spec.name} is still running (pid ${running}); stop() it first`);
    }
    this.child = spawnServer(this.spec, this.detached);
    await this.waitReady(this.child);
  }

  kill(signal: NodeJS.Signals = 'SIGKILL'): void {
    for (const pid of this.livePids()) {
      try {
        process.kill(pid, signal);
      } catch {
        // exited in the meantime
      }
    }
  }

  async freeze(): Promise<void> {
    const pids = this.livePids();
    if (pids.length === 0) throw new Error(`${this.spec.name} is not running: nothing to freeze`);
    await Promise.all(pids.map(freezeProcess));
  }

  async stop(): Promise<void> {
    if (this.livePids().length === 0) return;
    this.kill('SIGTERM');
    if (await this.waitForExit(STOP_TIMEOUT_MS)) return;
    this.kill('SIGKILL');
    if (!(await this.waitForExit(5_000))) {
      throw new Error(`${this.spec.name} (pid ${this.livePids()}) survived SIGKILL`);
    }
  }

  async restart(): Promise<void> {
    await this.stop();
    await this.start();
  }

  /** Polls until no server of this backend is alive; false on timeout. */
  private async waitForExit(timeoutMs: number): Promise<boolean> {
    const deadline = Date.now() + timeoutMs;
    while (this.livePids().length > 0) {
      if (Date.now() > deadline) return false;
      await sleep(50);
    }
    return true;
  }

  private async waitReady(child: ChildProcess): Promise<void> {
    const { spec } = this;
    const deadline = Date.now() + READY_TIMEOUT_MS;
    let lastError: unknown;
    for (;;) {
      if (child.exitCode !== null || child.signalCode !== null) {
        throw new Error(
          `${spec.name} exited during startup (${child.exitCode ?? child.signalCode}); ` +
            `log ${spec.logFile}:\n${logTail(spec.logFile)}`,
        );
      }
      try {
        await probes[spec.name](spec);
        return;
      } catch (err) {
        lastError = err;
      }
      if (Date.now() > deadline) {
        child.kill('SIGKILL'); // don't leave a half-started server behind
        throw new Error(
          `${spec.name} not ready after ${READY_TIMEOUT_MS / 1000} s ` +
            `(${(lastError as Error)?.message}); log ${spec.logFile}:\n${logTail(spec.logFile)}`,
        );
      }
      await sleep(100);
    }
  }
}

/** Spawns a server with cwd in its dir and output appended to its log file. */
function spawnServer(spec: ServerSpec, detached: boolean): ChildProcess {
  const fd = openSync(spec.logFile, 'a');
  let child: ChildProcess;
  try {
    child = spawn(spec.command, [...spec.args], {
      cwd: spec.dir,
      stdio: ['ignore', fd, fd],
      detached,
    });
  } finally {
    closeSync(fd);
  }
  // A spawn failure (ENOENT) surfaces through waitReady's exit check; don't crash on 'error'.
  child.on('error', (err) => console.error(`${spec.name}: ${err.message}`));
  // Detached servers belong to a test process that must be able to exit without them.
  if (detached) child.unref();
  return child;
}

function toHandle<H extends BackendHandle>(server: ServerProcess, extra: object = {}): H {
  const { spec } = server;
  const handle: BackendHandle = {
    name: spec.name,
    url: spec.url,
    port: spec.port,
    dir: spec.dir,
    spec,
    get pid() {
      return server.pid;
    },
    stop: () => server.stop(),
    kill: (signal) => server.kill(signal),
    freeze: () => server.freeze(),
    restart: () => server.restart(),
  };
  return Object.assign(handle, extra) as H;
}

// ---------------------------------------------------------------------------------------------
// The three backends

export interface StartOptions {
  /** Port to listen on; a free one is picked by default. */
  port?: number;
}

export async function startMariaDb(dir: string, opts: StartOptions = {}): Promise<MariaDbHandle> {
  dir = path.resolve(dir);
  const dataDir = path.join(dir, 'data');
  const socket = path.join(dir, 'mysqld.sock');
  const logFile = path.join(dir, 'mariadb.log');
  if (Buffer.byteLength(socket) > 100) {
    // sun_path is 108 bytes; mariadbd fails with an unhelpful message beyond that.
    throw new Error(`MariaDB socket path too long (${socket}); use a shorter TMPDIR`);
  }
  mkdirSync(dataDir, { recursive: true });
  // Root logs in through the unix socket as the OS user running the tests (root on CI).
  const osUser = os.userInfo().username;
  await runLogged(
    binaries.installDb(),
    [
      '--no-defaults',
      `--user=${osUser}`,
      `--datadir=${dataDir}`,
      '--auth-root-authentication-method=socket',
      `--auth-root-socket-user=${osUser}`,
      '--skip-test-db',
    ],
    logFile,
  );

  const port = opts.port ?? (await freePort());
  const password = randomBytes(12).toString('hex'); // hex: safe in a URL without escaping
  const spec: ServerSpec = {
    name: 'mysql',
    dir,
    port,
    url: `mysql://app:${password}@127.0.0.1:${port}/support_agent`,
    command: binaries.mariadbd(),
    args: [
      '--no-defaults',
      `--user=${osUser}`,
      `--datadir=${dataDir}`,
      `--socket=${socket}`,
      `--port=${port}`,
      '--bind-address=127.0.0.1',
      // --no-defaults would leave the server at latin1.
      '--character-set-server=utf8mb4',
      '--collation-server=utf8mb4_unicode_ci',
      '--skip-log-bin',
      '--innodb-buffer-pool-size=256M',
      '--max-connections=500',
      `--pid-file=${path.join(dir, 'mysqld.pid')}`,
    ],
    logFile,
    pidFile: path.join(dir, 'mysqld.pid'),
    socket,
  };
  const server = new ServerProcess(spec, false);
  await server.start();
  try {
    await adminQuery(socket, setupSql(password));
  } catch (err) {
    await server.stop();
    throw err;
  }
  return toHandle<MariaDbHandle>(server, {
    adminExec: (sql: string) => adminQuery(socket, sql),
  });
}

/** Database plus an app user for TCP clients; mysql2 needs mysql_native_password. */
function setupSql(password: string): string {
  // Tests create extra databases, hence ALL on *.*. Both hosts: 127.0.0.1 resolves to
  // 'localhost', where an anonymous ''@'localhost' would otherwise win over 'app'@'%'.
  const users = ["'app'@'%'", "'app'@'localhost'"];
  return [
    'CREATE DATABASE IF NOT EXISTS support_agent CHARACTER SET utf8mb4 COLLATE utf8mb4_unicode_ci;',
    ...users.flatMap((user) => [
      `CREATE USER ${user} IDENTIFIED VIA mysql_native_password USING PASSWORD('${password}');`,
      `GRANT ALL PRIVILEGES ON *.* TO ${user};`,
    ]),
    'FLUSH PRIVILEGES;',
  ].join('\n');
}

export async function startRedis(dir: string, opts: StartOptions = {}): Promise<RedisHandle> {
  dir = path.resolve(dir);
  mkdirSync(dir, { recursive: true });
  const port = opts.port ?? (await freePort());
  const pidFile = path.join(dir, 'redis.pid');
  const spec: ServerSpec = {
    name: 'redis',
    dir,
    port,
    url: `redis://127.0.0.1:${port}`,
    command: binaries.redis(),
    // Not daemonized: we keep the PID of our own child. Redis still writes --pidfile.
    args: [
      '--port',
      String(port),
      '--bind',
      '127.0.0.1',
      '--save',
      '',
      '--appendonly',
      'no',
      '--daemonize',
      'no',
      '--dir',
      dir,
      '--pidfile',
      pidFile,
    ],
    logFile: path.join(dir, 'redis.log'),
    pidFile,
  };
  const server = new ServerProcess(spec, false);
  await server.start();
  return toHandle<RedisHandle>(server);
}

export async function startNats(dir: string, opts: StartOptions = {}): Promise<NatsHandle> {
  dir = path.resolve(dir);
  const storeDir = path.join(dir, 'nats');
  mkdirSync(storeDir, { recursive: true });
  const port = opts.port ?? (await freePort());
  const pidFile = path.join(dir, 'nats.pid');
  const spec: ServerSpec = {
    name: 'nats',
    dir,
    port,
    url: `nats://127.0.0.1:${port}`,
    command: binaries.nats(),
    // Same port and store dir on every start, so JetStream data survives a restart.
    args: ['-a', '127.0.0.1', '-p', String(port), '-js', '-sd', storeDir, '-P', pidFile],
    logFile: path.join(dir, 'nats.log'),
    pidFile,
  };
  const server = new ServerProcess(spec, false);
  await server.start();
  return toHandle<NatsHandle>(server);
}

/** Starts all three in parallel under rootDir/{mysql,redis,nats}. */
export async function startBackends(rootDir: string): Promise<Backends> {
  // Pick all ports at once so the three servers cannot be handed the same one.
  const [mysqlPort, redisPort, natsPort] = await freePorts(3);
  const starting = [
    startMariaDb(path.join(rootDir, 'mysql'), { port: mysqlPort }),
    startRedis(path.join(rootDir, 'redis'), { port: redisPort }),
    startNats(path.join(rootDir, 'nats'), { port: natsPort }),
  ] as const;
  const results = await Promise.allSettled(starting);
  const failures = results.flatMap((r) => (r.status === 'rejected' ? [r.reason as Error] : []));
  if (failures.length > 0) {
    // Don't leave the ones that did come up running.
    const started = results.flatMap((r) => (r.status === 'fulfilled' ? [r.value] : []));
    await Promise.allSettled(started.map((h) => h.stop()));
    throw failures.length === 1
      ? failures[0]
      : new AggregateError(failures, failures.map((f) => f.message).join('\n'));
  }
  const [mysql, redis, nats] = await Promise.all(starting); // all fulfilled by now
  return {
    mysql,
    redis,
    nats,
    async stop() {
      const stops = await Promise.allSettled([mysql.stop(), redis.stop(), nats.stop()]);
      const errors = stops.flatMap((s) => (s.status === 'rejected' ? [s.reason as Error] : []));
      if (errors.length > 0) throw errors[0];
    },
  };
}

// ---------------------------------------------------------------------------------------------
// State file: lets a test process (not the one that started the servers) kill and restart them.

function toState(handle: BackendHandle): BackendState {
  return { ...handle.spec, args: [...handle.spec.args], pid: handle.pid };
}

export function writeBackendsState(
  file: string,
  backends: Pick<Backends, 'mysql' | 'redis' | 'nats'>,
): void {
  const state: BackendsState = {
    version: 1,
    mysql: toState(backends.mysql),
    redis: toState(backends.redis),
    nats: toState(backends.nats),
  };
  writeFileSync(file, JSON.stringify(state, null, 2) + '\n');
}

export function readBackendsState(file: string): BackendsState {
  const state = JSON.parse(readFileSync(file, 'utf8')) as BackendsState;
  if (state.version !== 1) throw new Error(`${file}: unsupported backends state version`);
  return state;
}

/**
 * Kill/stop/start one backend from any process. A server started here is detached and unref'd
 * (the test process may exit before it), logs to the backend's log file, and writes the same
 * pid file, which is how the process that owns the backends finds and stops it at teardown.
 */
export function controlBackend(state: BackendsState, name: BackendName): BackendControl {
  const entry = state[name];
  const server = new ServerProcess(entry, true, entry.pid);
  return {
    get pid() {
      return server.pid;
    },
    kill: (signal) => server.kill(signal),
    stop: () => server.stop(),
    start: () => server.start(),
  };
}
