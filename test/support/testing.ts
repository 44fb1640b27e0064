// What every suite's helpers need: fresh ids, required variables, error assertions, polling.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import type { AppError, ErrorCode } from '@support-agent/shared';

/** A fresh organization id, so test files sharing servers never see each other's data. */
export function newOrg(prefix = 'org'): string {
  return `${prefix}_${randomBytes(5).toString('hex')}`;
}

/** A variable the test driver sets (TEST_MYSQL_URL, …), or a clear error outside it. */
export function requireEnv(name: string): string {
  const value = process.env[name];
  if (!value) throw new Error(`${name} is not set: run the tests through \`npm test\``);
  return value;
}

/** Asserts that a call fails with the given AppError code (and param, when given). */
export async function assertAppError(
  promise: Promise<unknown>,
  code: ErrorCode,
  param?: string,
): Promise<AppError> {
  try {
    await promise;
  } catch (err) {
    const e = err as AppError;
    assert.equal(e.code, code, `expected ${code}, got ${e.code}: ${e.message}`);
    if (param !== undefined) assert.equal(e.param, param);
    return e;
  }
  assert.fail(`expected the call to fail with ${code}`);
}

/** Polls `check` until it returns something other than undefined, or fails after `timeoutMs`. */
export async function eventually<T>(
  check: () => Promise<T | undefined>,
  timeoutMs: number,
  what: string,
): Promise<T> {
  const until = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const value = await check();
      if (value !== undefined) return value;
    } catch (err) {
      last = err;
    }
    if (Date.now() > until)
      throw new Error(
        `timed out after ${timeoutMs} ms waiting for ${what}${last ? `: ${String(last)}` : ''}`,
      );
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** Something a suite started, ended by its stop(), close() or drop(). */
export type Stoppable =
  { stop(): Promise<unknown> } | { close(): Promise<unknown> } | { drop(): Promise<unknown> };

/**
 * Ends what a suite started, one after the other in the order given (a service before the
 * backends it uses); undefined ones (a before() that failed half-way) are skipped.
 */
export async function stopAll(...things: Array<Stoppable | undefined>): Promise<void> {
  for (const thing of things) {
    if (thing === undefined) continue;
    if ('stop' in thing) await thing.stop();
    else if ('close' in thing) await thing.close();
    else await thing.drop();
  }
}
