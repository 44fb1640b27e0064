import { spawn, type ChildProcess } from 'node:child_process';
import { closeSync, openSync, readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = resolve(fileURLToPath(new URL('../../../..', import.meta.url)));
const MAIN = resolve(ROOT, 'services/answers/src/main.ts');

/** The answers service as a child process (from source, via tsx), so a test can SIGKILL it. */
export class AnswersProcess {
  private child: ChildProcess | undefined;

  constructor(
    private readonly env: Record<string, string>,
    readonly logFile: string,
  ) {}

  start(): void {
    const fd = openSync(this.logFile, 'a');
    try {
      this.child = spawn(process.execPath, ['--import', 'tsx', MAIN], {
        env: { PATH: process.env.PATH ?? '', ...this.env },
        stdio: ['ignore', fd, fd],
        cwd: ROOT,
      });
    } finally {
      closeSync(fd);
    }
  }

  /** Sends a signal and waits for the exit (SIGKILL after timeoutMs). */
  async stop(signal: NodeJS.Signals = 'SIGTERM', timeoutMs = 15_000): Promise<void> {
    const child = this.child;
    if (!child || child.exitCode !== null || child.signalCode !== null) return;
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
