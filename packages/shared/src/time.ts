import { setTimeout as delay } from 'node:timers/promises';

export const HOUR_MS = 3_600_000;
export const DAY_MS = 24 * HOUR_MS;

/** RFC 3339 UTC with milliseconds, the one timestamp format of the API. */
export function toRfc3339(date: Date): string {
  return date.toISOString();
}

export function sleep(ms: number): Promise<void> {
  return delay(ms);
}

/** Resolves after `ms`, or at once when `signal` aborts (used to stop polling loops quickly). */
export function sleepUnlessAborted(ms: number, signal: AbortSignal): Promise<void> {
  // node's timer rejects with an AbortError when the signal aborts: that is the early wake-up.
  return delay(ms, undefined, { signal }).catch(() => undefined);
}

/** `promise`, or the error `late()` makes once `ms` have passed first (the timer cleared either way). */
export async function withTimeout<T>(
  promise: Promise<T>,
  ms: number,
  late: () => Error,
): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(late()), ms);
  });
  try {
    return await Promise.race([promise, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

/** Waits for `promise` at most `ms`, however it ends: for work that must not block a shutdown. */
export async function waitAtMost(promise: Promise<unknown>, ms: number): Promise<void> {
  await withTimeout(promise, ms, () => new Error('late')).catch(() => undefined);
}
