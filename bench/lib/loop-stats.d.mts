/** One window's pause and allocation figures of a process (lib/loop-stats.mjs). */
export interface LoopStatsWindow {
  scavenges: number;
  fullGcs: number;
  gcPauseMs: number;
  scavengePauseMs: number;
  maxGcPauseMs: number;
  longestGcPausesMs: number[];
  allocatedMb: number;
  promotedMb: number;
  loopDelayP50Ms: number;
  loopDelayP99Ms: number;
  loopDelayMaxMs: number;
}

export class LoopStats {
  constructor(resolutionMs?: number);
  take(): LoopStatsWindow;
}
