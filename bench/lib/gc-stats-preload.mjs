// Preloaded into a service by bench/gateway-ab.ts (NODE_OPTIONS=--import …; Node refuses
// --trace-gc there): records the duration of every young- and old-generation collection and
// prints them as one `GCSTATS {"minor":[ms…],"major":[ms…]}` line on stderr when the process
// exits, so the harness can count collections per request from the service's log.
import { writeSync } from 'node:fs';
import { PerformanceObserver, constants } from 'node:perf_hooks';

const minor = [];
const major = [];
new PerformanceObserver((list) => {
  for (const entry of list.getEntries()) {
    const kind = entry.detail?.kind;
    if (kind === constants.NODE_PERFORMANCE_GC_MINOR) minor.push(entry.duration);
    else if (kind === constants.NODE_PERFORMANCE_GC_MAJOR) major.push(entry.duration);
  }
}).observe({ entryTypes: ['gc'] });
process.once('exit', () => writeSync(2, `GCSTATS ${JSON.stringify({ minor, major })}\n`));
