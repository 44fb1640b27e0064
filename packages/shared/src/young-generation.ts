/**
 * Imported first by a service whose young generation is capped (`capSemiSpace`, v8-flags.ts):
 * holds V8's young generation at its size while the service's modules load (they would grow
 * it, most of what they allocate survives), until the configured cap takes over. Kept free of
 * other imports so it runs before them.
 */
import { setFlagsFromString } from 'node:v8';

setFlagsFromString('--semi-space-growth-factor=1');
