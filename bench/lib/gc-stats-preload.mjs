// Preloaded into a service by bench/gateway-ab.ts (NODE_OPTIONS=--import …; Node refuses
// --trace-gc there): records the duration of every young- and old-generation collection and
// the bytes allocated between collections (V8's GCProfiler: heap in use before a collection
// minus after the one before it), and prints them as one
// `GCSTATS {"minor":[ms…],"major":[ms…],"allocatedMb":n}` line on stderr when the process
// exits, so the harness can count collections and allocation per request from the service's log.
import { writeSync } from 'node:fs';
import { PerformanceObserver, constants } from 'node:perf_hooks';
import { GCProfiler } from 'node:v8';

const minor = [];
const major = [];
new PerformanceObserver((list) => {
  for (const entry of list.getEntries()) {
    const kind = entry.detail?.kind;
    if (kind === constants.NODE_PERFORMANCE_GC_MINOR) minor.push(entry.duration);
    else if (kind === constants.NODE_PERFORMANCE_GC_MAJOR) major.push(entry.duration);
  }
}).observe({ entryTypes: ['gc'] });
const profiler = new GCProfiler();
profiler.start();
process.once('exit', () => {
  let allocated = 0;
  let previousAfter;
  for (const gc of profiler.stop().statistics) {
    const before = gc.beforeGC.heapStatistics.usedHeapSize;
    if (previousAfter !== undefined) allocated += Math.max(0, before - previousAfter);
    previousAfter = gc.afterGC.heapStatistics.usedHeapSize;
  }
  const allocatedMb = Math.round(allocated / 1e4) / 100;
  writeSync(2, `GCSTATS ${JSON.stringify({ minor, major, allocatedMb })}\n`);
});
