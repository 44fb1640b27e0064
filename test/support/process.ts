// A service as a child process, two ways: ServiceProcess (output to a log file, restartable:
// the stacks and crash tests) and runMain (output captured: the tests of each service's main).
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { closeSync, mkdirSync, openSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { checkHealth } from '@support-agent/shared';

const ROOT = resolve(fileURLToPath(new URL('../..', import.meta.url)));

/** The command line of a service: `node dist/main.js` as its container runs it, or its source. */
function mainArgs(service: string, fromSource: boolean): string[] {
  const dir = join(ROOT, 'services', service);
  return fromSource ? ['--import', 'tsx', join(dir, 'src/main.ts')] : [join(dir, 'dist/main.js')];
}

/** One service process, its output appended to `logDir/name.log`. */
export class ServiceProcess {
  private child: ChildProcess | undefined;
  readonly logFile: string;

  constructor(
    readonly name: string,
    readonly service: string,
    readonly env: Record<string, string>,
    logDir: string,
    /** Run src/main.ts through tsx instead of the build (a test of unbuilt code). */
    private readonly fromSource = false,
  ) {
    mkdirSync(logDir, { recursive: true });
    this.logFile = join(logDir, `${name}.log`);
  }

  /** Starts the process; `extraEnv` applies to this start only (e.g. enabling a scheduler). */
  start(extraEnv: Record<string, string> = {}): void {
    const fd = openSync(this.logFile, 'a');
    try {
      this.child = spawn(process.execPath, mainArgs(this.service, this.fromSource), {
        env: { PATH: process.env.PATH ?? '', LOG_LEVEL: 'info', ...this.env, ...extraEnv },
        stdio: ['ignore', fd, fd],
        cwd: ROOT,
      });
    } finally {
      closeSync(fd);
    }
  }

  get pid(): number | undefined {
    return this.child?.pid;
  }

  get running(): boolean {
    return !!this.child && this.child.exitCode === null && this.child.signalCode === null;
  }

  /** Sends a signal and waits for exit (SIGKILL after timeoutMs). */
  async stop(signal: NodeJS.Signals = 'SIGTERM', timeoutMs = 15_000): Promise<void> {
    const child = this.child;
    if (!child || !this.running) return;
    await new Promise<void>((done) => {
      const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
      child.once('exit', () => {
        clearTimeout(timer);
        done();
      });
      child.kill(signal);
    });
  }

  logs(): string {
    try {
      return readFileSync(this.logFile, 'utf8');
    } catch {
      return '';
    }
  }
}

/** A service's main.ts run from source with only `env` (and PATH), its output captured. */
export interface MainRun {
  child: ChildProcess;
  /** The exit code. */
  exited: Promise<number | null>;
  output(): { stdout: string; stderr: string };
}

export function runMain(service: string, env: Record<string, string>): MainRun {
  const child = spawn(process.execPath, mainArgs(service, true), {
    env: { PATH: process.env.PATH ?? '', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (d: Buffer) => (stdout += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
  const exited = new Promise<number | null>((done) => child.on('exit', (code) => done(code)));
  return { child, exited, output: () => ({ stdout, stderr }) };
}

/** Waits until the gRPC health service of `address` reports `grpcService` serving. */
export async function waitUntilServing(
  run: MainRun,
  address: string,
  grpcService: string,
  timeoutMs = 20_000,
): Promise<void> {
  const until = Date.now() + timeoutMs;
  while (!(await checkHealth(address, grpcService))) {
    assert.ok(Date.now() < until, `service did not become healthy: ${run.output().stderr}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/**
 * SIGTERM, then asserts a graceful stop: exit code 0, `stoppedMessage` logged, no error
 * logged. Kills the process whatever happens.
 */
export async function assertGracefulStop(run: MainRun, stoppedMessage: string): Promise<void> {
  try {
    run.child.kill('SIGTERM');
    assert.equal(await run.exited, 0);
    const logs = run
      .output()
      .stdout.split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l) as { msg: string; level: string });
    assert.ok(logs.some((l) => l.msg === stoppedMessage));
    assert.ok(
      logs.every((l) => l.level !== 'error'),
      'no errors logged',
    );
  } finally {
    run.child.kill('SIGKILL');
  }
}
