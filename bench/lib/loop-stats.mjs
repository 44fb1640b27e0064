// What a process's own pauses add to a request's latency, measured inside the process so the
// figures hold on a shared machine (other processes' load does not enter them): every garbage
// collection's main-thread pause, the bytes allocated and promoted between collections (V8's
// GCProfiler: heap statistics before and after each collection), and the event loop's delay
// (perf_hooks.monitorEventLoopDelay). Used by lib/loop-stats-preload.mjs in the services and
// directly by the harness for its own process (bench/tail-path.ts).
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { GCProfiler } from 'node:v8';

const MB = 1024 * 1024;
const ms = (ns) => Math.round(ns / 1e4) / 100;

/** The pause and allocation figures of one window; `take()` ends it and starts the next. */
export class LoopStats {
  /** @param {number} resolutionMs how often the event-loop timer samples (finer catches shorter stalls) */
  constructor(resolutionMs = 2) {
    this.delay = monitorEventLoopDelay({ resolution: resolutionMs });
    this.delay.enable();
    this.profiler = new GCProfiler();
    this.profiler.start();
  }

  /** Stats since the last take() (or construction), then starts a new window. */
  take() {
    const { statistics } = this.profiler.stop();
    this.profiler.start();
    const pauses = { minor: [], major: [] };
    let allocated = 0;
    let promoted = 0;
    let previousAfter = this.lastAfter;
    for (const gc of statistics) {
      const before = gc.beforeGC.heapStatistics.usedHeapSize;
      if (previousAfter !== undefined) allocated += Math.max(0, before - previousAfter);
      previousAfter = gc.afterGC.heapStatistics.usedHeapSize;
      const young = gc.gcType === 'Scavenge' || gc.gcType === 'MinorMarkCompact';
      (young ? pauses.minor : pauses.major).push(gc.cost / 1000);
      if (young) promoted += Math.max(0, oldUsed(gc.afterGC) - oldUsed(gc.beforeGC));
    }
    this.lastAfter = previousAfter;
    const all = [...pauses.minor, ...pauses.major].sort((a, b) => b - a);
    const d = this.delay;
    const result = {
      scavenges: pauses.minor.length,
      fullGcs: pauses.major.length,
      gcPauseMs: round(all.reduce((s, x) => s + x, 0)),
      scavengePauseMs: round(pauses.minor.reduce((s, x) => s + x, 0)),
      maxGcPauseMs: round(all[0] ?? 0),
      // The longest pauses, longest first: the ones a p99 can meet.
      longestGcPausesMs: all.slice(0, 5).map(round),
      // From the last collection before the window to the last one in it.
      allocatedMb: round(allocated / MB),
      promotedMb: round(promoted / MB),
      loopDelayP50Ms: ms(d.percentile(50)),
      loopDelayP99Ms: ms(d.percentile(99)),
      loopDelayMaxMs: ms(d.max),
    };
    d.reset();
    return result;
  }
}

/** Bytes in use in the old generation (where a scavenge's survivors of two rounds go). */
function oldUsed(snapshot) {
  return snapshot.heapSpaceStatistics
    .filter((s) => s.spaceName === 'old_space' || s.spaceName === 'large_object_space')
    .reduce((sum, s) => sum + s.spaceUsedSize, 0);
}

const round = (x) => Math.round(x * 100) / 100;
