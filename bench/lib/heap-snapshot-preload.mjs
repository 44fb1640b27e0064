// Preloaded into a service by bench/heap-retainers.ts (NODE_OPTIONS=--import …): on every
// SIGWINCH writes a heap snapshot (v8.writeHeapSnapshot, after a full collection) into
// BENCH_SNAPSHOT_DIR and prints `HEAPSNAPSHOT <path>` on stderr once it is complete, so the
// harness can take two snapshots a known interval apart under load and diff them.
import { writeSync } from 'node:fs';
import { join } from 'node:path';
import { writeHeapSnapshot } from 'node:v8';

let n = 0;
process.on('SIGWINCH', () => {
  const file = join(process.env.BENCH_SNAPSHOT_DIR ?? '.', `${process.pid}-${++n}.heapsnapshot`);
  writeHeapSnapshot(file);
  writeSync(2, `HEAPSNAPSHOT ${file}\n`);
});
