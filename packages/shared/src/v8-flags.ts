import { PerformanceObserver } from 'node:perf_hooks';
import { getHeapSpaceStatistics, setFlagsFromString } from 'node:v8';
import { z } from 'zod';

/**
 * V8 garbage-collector flags a service may set on itself through `V8_FLAGS`. Node
 * refuses most V8 flags in NODE_OPTIONS, and a container's command line is not the one
 * place every way of starting a service (compose, Kubernetes, `npm start`, the test and
 * benchmark harnesses) shares; the service's own configuration is. Only flags V8 reads at
 * every collection are accepted, so setting them first thing at start-up takes effect
 * (measured: docs/performance.md; `--no-parallel-scavenge` checked with
 * --trace-parallel-scavenge: one scavenging task instead of 2–10); sizes fixed when the heap
 * is set up (such as --max-semi-space-size) would silently do nothing here and belong in
 * NODE_OPTIONS (the young generation's can be capped at run time instead: capSemiSpace below).
 */
const ALLOWED = new Set([
  '--heap-growing-percent',
  '--optimize-for-size',
  '--no-parallel-scavenge',
]);

const flag = /^(--[a-z-]+)(=\d+)?$/;

/**
 * The `V8_FLAGS` variable: space-separated allowed flags, `defaults` when unset; `effect` (what
 * the defaults do for this service) completes its description.
 */
export function v8FlagsEnv(defaults: string, effect?: string) {
  const schema = z
    .string()
    .default(defaults)
    .superRefine((value, ctx) => {
      for (const token of value.split(/\s+/).filter(Boolean)) {
        const m = flag.exec(token);
        if (!m || !ALLOWED.has(m[1]!))
          ctx.addIssue({
            code: 'custom',
            message: `${token} is not allowed (allowed: ${[...ALLOWED].join(', ')}, with =<number> where they take one)`,
          });
      }
    });
  return effect === undefined
    ? schema
    : schema.describe(`V8 heap flags applied at start-up (${effect}).`);
}

/** Applies validated `V8_FLAGS` to this process. */
export function applyV8Flags(flags: string): void {
  for (const token of flags.split(/\s+/).filter(Boolean)) setFlagsFromString(token);
}

/**
 * `V8_SEMI_SPACE_MAX_MB`: the largest semi-space V8's young generation may grow to, MB (a power
 * of two), `fallback` when unset; 0 leaves V8's own limit (16 MB on 64-bit Node 20).
 */
export function semiSpaceMaxEnv(fallback: number, effect: string) {
  return z.coerce
    .number()
    .int()
    .refine((n) => n === 0 || (n >= 1 && n <= 64 && (n & (n - 1)) === 0), {
      message: 'must be 0 or a power of two from 1 to 64',
    })
    .default(fallback)
    .describe(`Largest semi-space of V8's young generation, MB; 0 = V8's own (${effect}).`);
}

const MB = 1024 * 1024;
/** V8's default `--semi-space-growth-factor`. */
const SEMI_SPACE_GROWTH = 2;

/**
 * The young generation's semi-space now, MB: the capacity it allocates in (used + available,
 * a little under its size for the pages' headers, hence rounded). Not space_size: that counts
 * the other semi-space only while it is committed (not at start-up).
 */
function semiSpaceMb(): number {
  const young = getHeapSpaceStatistics().find((s) => s.space_name === 'new_space');
  return young ? Math.round((young.space_used_size + young.space_available_size) / MB) : 0;
}

/**
 * Caps V8's young generation at run time. Its limit (`--max-semi-space-size`) is fixed when the
 * heap is set up, before a service's code runs, so only a command line or NODE_OPTIONS could
 * set it, and not every way of starting a service shares one. V8 grows a semi-space (1 MB at
 * first) by `--semi-space-growth-factor` (2) whenever more than its size survived scavenges
 * since the last growth, up to 16 MB on 64-bit, and reads that factor at every growth. So the
 * factor stays 1 (no growth): from the service's first import (`@support-agent/shared/
 * young-generation`, before loading modules grows it), and here too, except while
 * `growSemiSpace` brings it to the cap in one synchronous stretch. A check after garbage
 * collections that changes nothing could not do it: collections run in the middle of a long
 * stretch (an import's batch) and its callback only after it, too late to stop a second growth.
 * Should V8 shrink it (an idle heap), the next collection's check grows it again. 0 restores
 * V8's default growth. A V8 without the flag ignores it: no cap, as before.
 */
export function capSemiSpace(maxMb: number): void {
  if (maxMb === 0) {
    setFlagsFromString(`--semi-space-growth-factor=${SEMI_SPACE_GROWTH}`);
    return;
  }
  setFlagsFromString('--semi-space-growth-factor=1');
  // Stops trying should a growth not reach the cap (a V8 that grows otherwise).
  const check = () => {
    if (semiSpaceMb() < maxMb && !growSemiSpace(maxMb)) observer.disconnect();
  };
  const observer = new PerformanceObserver(check);
  observer.observe({ entryTypes: ['gc'] });
  check();
}

/**
 * Makes V8 grow the young generation to `maxMb` now: one growth by the factor that lands on it
 * (sizes are powers of two), forced by keeping young objects alive until more than a
 * semi-space of them survived; then the factor is 1 again. A few MB of short-lived garbage.
 * False when it did not get there.
 */
function growSemiSpace(maxMb: number): boolean {
  const size = semiSpaceMb();
  if (size <= 0) return false;
  setFlagsFromString(`--semi-space-growth-factor=${Math.max(1, Math.floor(maxMb / size))}`);
  try {
    const kept: number[][] = [];
    // Each round keeps ≈ 0.5 MB; V8 grows once what survived exceeds the semi-space.
    for (let round = 0; round < 16 * maxMb && semiSpaceMb() < maxMb; round++)
      for (let i = 0; i < 1000; i++) kept.push(new Array<number>(64).fill(round));
  } finally {
    setFlagsFromString('--semi-space-growth-factor=1');
  }
  return semiSpaceMb() >= maxMb;
}
