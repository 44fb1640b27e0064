// Preloaded into a service by bench/tail-path.ts (NODE_OPTIONS=--import …): on every SIGUSR2
// prints the process's garbage-collection pauses, allocation and event-loop delay since the
// previous SIGUSR2 (lib/loop-stats.mjs) as one `LOOPSTATS {…}` line on stderr, then starts
// over, so the harness brackets exactly the run it measures.
import { writeSync } from 'node:fs';
import { LoopStats } from './loop-stats.mjs';

const stats = new LoopStats();
process.on('SIGUSR2', () => writeSync(2, `LOOPSTATS ${JSON.stringify(stats.take())}\n`));
