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
 * NODE_OPTIONS.
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
 * Caps V8's young generation at run time. Its limit (`--max-semi-space-size`) is fixed when the
 * heap is set up, before a service's code runs, so only a command line or NODE_OPTIONS could
 * set it, and not every way of starting a service shares one. V8 starts each semi-space at
 * 1 MB and, while most of it survives scavenges (a bulk import), multiplies it by
 * `--semi-space-growth-factor`, a flag it reads at every growth: once the young generation has
 * reached the cap, the factor becomes 1 (no further growth); should V8 shrink it again (an
 * idle heap), the default factor comes back. Checked after each garbage collection. A V8
 * without the flag ignores it: the young generation then grows as before.
 */
export function capSemiSpace(maxMb: number): void {
  if (maxMb === 0) return;
  let growing = true;
  const check = () => {
    const young = getHeapSpaceStatistics().find((s) => s.space_name === 'new_space');
    // space_size is both semi-spaces (the one allocated in and the one scavenged into).
    const atCap = young !== undefined && young.space_size / 2 >= maxMb * MB;
    if (atCap === growing) {
      growing = !atCap;
      setFlagsFromString(`--semi-space-growth-factor=${atCap ? 1 : SEMI_SPACE_GROWTH}`);
    }
  };
  new PerformanceObserver(check).observe({ entryTypes: ['gc'] });
  check();
}
