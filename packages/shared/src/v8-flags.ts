import { setFlagsFromString } from 'node:v8';
import { z } from 'zod';

/**
 * V8 garbage-collector sizing flags a service may set on itself through `V8_FLAGS`. Node
 * refuses most V8 flags in NODE_OPTIONS, and a container's command line is not the one
 * place every way of starting a service (compose, Kubernetes, `npm start`, the test and
 * benchmark harnesses) shares; the service's own configuration is. Only flags V8's heap
 * controller reads at every collection are accepted, so setting them first thing at start-up
 * takes effect (measured: docs/performance.md); sizes fixed when the heap is set up (such
 * as --max-semi-space-size) would silently do nothing here and belong in NODE_OPTIONS.
 */
const ALLOWED = new Set(['--heap-growing-percent', '--optimize-for-size']);

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
