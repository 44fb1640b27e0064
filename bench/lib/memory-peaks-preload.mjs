// Preloaded into a service by bench/gateway-rss.ts (NODE_OPTIONS=--import …): samples
// process.memoryUsage() every 50 ms and, on SIGUSR2, prints the peaks of its parts since the
// last SIGUSR2 as one `MEMPEAKS {"rss":MB,"heapTotal":…,"heapUsed":…,"external":…,
// "arrayBuffers":…, "new_space":…}` line on stderr, then starts over. RSS alone does not say whether the
// memory is V8's heap (young generation included in heapTotal) or buffers outside it.
import { writeSync } from 'node:fs';
import { getHeapSpaceStatistics, getHeapStatistics } from 'node:v8';

const MB = 1024 * 1024;
let peaks = {};
const sample = () => {
  for (const [k, v] of Object.entries(process.memoryUsage())) peaks[k] = Math.max(peaks[k] ?? 0, v);
  // The young generation's reserved size (semi-spaces) and the old space's, apart.
  for (const s of getHeapSpaceStatistics())
    if (
      s.space_name === 'new_space' ||
      s.space_name === 'old_space' ||
      s.space_name === 'large_object_space'
    )
      peaks[s.space_name] = Math.max(peaks[s.space_name] ?? 0, s.space_size);
  // What V8 holds in RAM (all spaces) and mallocs itself: RSS minus these and the array
  // buffers is memory outside V8 (the allocator's arenas, Node's and libuv's own).
  const h = getHeapStatistics();
  peaks.heapPhysical = Math.max(peaks.heapPhysical ?? 0, h.total_physical_size);
  peaks.v8Malloced = Math.max(peaks.v8Malloced ?? 0, h.malloced_memory);
  peaks.rssOutsideHeap = Math.max(
    peaks.rssOutsideHeap ?? 0,
    process.memoryUsage.rss() - h.total_physical_size,
  );
};
setInterval(sample, 50).unref();
process.on('SIGUSR2', () => {
  sample();
  const mb = Object.fromEntries(
    Object.entries(peaks).map(([k, v]) => [k, Math.round((10 * v) / MB) / 10]),
  );
  writeSync(2, `MEMPEAKS ${JSON.stringify(mb)}\n`);
  peaks = {};
});
