// Shared helpers of the security suites (test/security): key variants, the contract's error
// shape, a bounded-concurrency runner, and a private Redis logical database per suite.
import assert from 'node:assert/strict';
import { requireEnv } from './mysql.js';

/**
 * The test Redis in a logical database of its own. The failed-authentication counter is per
 * client IP (127.0.0.1 for every suite) and lives for a minute: suites that send bad keys on
 * purpose must not spill it over into other suites.
 */
export function redisDatabase(db: number): string {
  const url = new URL(requireEnv('TEST_REDIS_URL'));
  url.pathname = `/${db}`;
  return url.toString();
}

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

/** A key of the right shape whose checksum does not match (one character of the body changed). */
export function badChecksumKey(key: string): string {
  const i = 9 + 5; // inside the 32-character random part
  const c = key[i]!;
  const replacement = BASE62[(BASE62.indexOf(c) + 1) % BASE62.length]!;
  return key.slice(0, i) + replacement + key.slice(i + 1);
}

/** Keys that are not of the `sak_live_<32><6>` shape, derived from a real one. */
export function malformedKeys(key: string): string[] {
  return [
    key.slice(0, -1), // one character short
    `${key}0`, // one too many
    key.replace('sak_live_', 'sak_test_'),
    key.replace('sak_live_', ''),
    `${key.slice(0, 20)}-${key.slice(21)}`, // not base62
    key.toUpperCase(),
  ];
}

/** The error codes of DESIGN.md §3 (plus the MCP endpoint's origin_not_allowed). */
export const ERROR_CODES = new Set([
  'invalid_request',
  'invalid_cursor',
  'unauthorized',
  'insufficient_scope',
  'not_found',
  'method_not_allowed',
  'payload_too_large',
  'rate_limited',
  'deflection_limit_reached',
  'internal_error',
  'service_unavailable',
  'origin_not_allowed',
]);

/** Asserts `{"error":{"message","code"[,"param"]}}` with a JSON content type. */
export function assertErrorBody(
  res: {
    status: number;
    headers: Headers | Record<string, string | string[] | undefined>;
    json: any;
    text?: string;
  },
  context: string,
): void {
  const type =
    res.headers instanceof Headers ? res.headers.get('content-type') : res.headers['content-type'];
  assert.match(String(type ?? ''), /^application\/json/, `${context}: content type`);
  const e = res.json?.error;
  assert.ok(e && typeof e === 'object', `${context}: no error object in ${res.text ?? ''}`);
  assert.equal(typeof e.message, 'string', `${context}: error.message`);
  assert.ok(ERROR_CODES.has(e.code), `${context}: unknown error code ${e.code}`);
}

/** Runs the tasks with at most `concurrency` in flight; results in order. */
export async function runPool<T>(
  tasks: Array<() => Promise<T>>,
  concurrency: number,
): Promise<T[]> {
  const results: T[] = new Array(tasks.length);
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(concurrency, tasks.length) }, async () => {
      while (next < tasks.length) {
        const i = next++;
        results[i] = await tasks[i]!();
      }
    }),
  );
  return results;
}

/** All subsets of a list, in binary counting order (the empty set first). */
export function subsets<T>(items: readonly T[]): T[][] {
  const out: T[][] = [];
  for (let mask = 0; mask < 1 << items.length; mask++) {
    out.push(items.filter((_, i) => mask & (1 << i)));
  }
  return out;
}
