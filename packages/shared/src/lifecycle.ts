import type { Logger } from './logger.js';
import { waitAtMost } from './time.js';

const exitHooks: Array<() => Promise<void>> = [];

/**
 * Work to finish after a graceful stop, before the process exits (e.g. flushing buffered
 * trace spans). Hooks run in order; a failing or slow one (over 5 s) never blocks the exit.
 */
export function addExitHook(hook: () => Promise<void>): void {
  exitHooks.push(hook);
}

async function runExitHooks(): Promise<void> {
  for (const hook of exitHooks) await waitAtMost(hook(), 5_000);
}

/**
 * Runs `stop` once on SIGTERM or SIGINT, then exits. A second signal forces exit,
 * so an operator is never stuck behind a hung drain.
 */
export function onShutdownSignal(logger: Logger, stop: () => Promise<void>): void {
  let stopping = false;
  const handler = (signal: NodeJS.Signals) => {
    if (stopping) {
      logger.warn({ signal }, 'second signal: exiting now');
      process.exit(1);
    }
    stopping = true;
    logger.info({ signal }, 'shutting down');
    stop()
      .then(runExitHooks)
      .then(
        () => process.exit(0),
        (err: unknown) => {
          logger.error({ err }, 'shutdown failed');
          process.exit(1);
        },
      );
  };
  process.on('SIGTERM', handler);
  process.on('SIGINT', handler);
}

/** Runs an async main, printing a clear message and exiting 1 if start-up fails. */
export function runMain(name: string, main: () => Promise<void>): void {
  main().catch((err: unknown) => {
    const message = err instanceof Error ? err.message : String(err);
    process.stderr.write(`${name}: failed to start: ${message}\n`);
    process.exit(1);
  });
}

/**
 * What a service's start() opened, closed newest first when it stops (or when start fails
 * half-way): a failing close is logged and the others still run.
 */
export class Closers {
  private readonly closes: Array<() => Promise<void> | void> = [];

  constructor(readonly logger: Logger) {}

  push(close: () => Promise<void> | void): void {
    this.closes.push(close);
  }

  async closeAll(): Promise<void> {
    for (let close = this.closes.pop(); close; close = this.closes.pop()) {
      try {
        await close();
      } catch (err) {
        this.logger.error({ err }, 'error while closing');
      }
    }
  }
}

/** `run` started at most once: every call returns the same promise (stop() called twice). */
export function once(run: () => Promise<void>): () => Promise<void> {
  let running: Promise<void> | undefined;
  return () => (running ??= run());
}
