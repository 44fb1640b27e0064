// A CPU profile of some processes during one run only: bench/lib/cpu-profile-preload.mjs
// (BENCH_PROFILE_WINDOWS=1) starts and stops the V8 profiler of a process on SIGUSR2.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import type { ProcessRef } from './measure.js';
import { busyShares, summarizeProfile, type CpuProfile } from './profile-summary.js';

export interface WindowProfile {
  process: string;
  file: string;
  /** Busy (non-idle) time sampled, ms. */
  busyMs: number;
  /** Self time of the busiest functions and of each package, as shares of the busy time. */
  top: [string, number][];
  packages: [string, number][];
}

/** Runs `run` with the profilers of `processes` on; returns its result and their profiles. */
export async function profiledRun<T>(
  dir: string,
  processes: ProcessRef[],
  run: () => Promise<T>,
  top = 12,
): Promise<{ result: T; profiles: WindowProfile[] }> {
  const live = processes.filter((p): p is ProcessRef & { pid: number } => p.pid !== undefined);
  const before = new Set(existsSync(dir) ? readdirSync(dir) : []);
  for (const p of live) process.kill(p.pid, 'SIGUSR2');
  const result = await run();
  for (const p of live) process.kill(p.pid, 'SIGUSR2');
  const profiles: WindowProfile[] = [];
  for (const p of live) {
    const file = await newFile(dir, before, `-${p.pid}-window-`);
    if (!file) continue;
    const profile = JSON.parse(readFileSync(join(dir, file), 'utf8')) as CpuProfile;
    const summary = summarizeProfile(profile, top + 1);
    const idle = summary.byPackage.find(([name]) => name === '(idle)')?.[1] ?? 0;
    profiles.push({
      process: p.name,
      file: join(dir, file),
      busyMs: Math.round(summary.totalMs * (1 - idle)),
      top: busyShares(summary).slice(0, top),
      packages: summary.byPackage
        .filter(([name]) => name !== '(idle)')
        .map(([name, share]) => [name, share / (1 - idle || 1)]),
    });
  }
  return { result, profiles };
}

/** The first file of `dir` not in `before` whose name contains `marker` (waits up to 10 s). */
async function newFile(dir: string, before: Set<string>, marker: string) {
  for (let i = 0; i < 100; i++) {
    const found =
      existsSync(dir) && readdirSync(dir).find((f) => f.includes(marker) && !before.has(f));
    if (found) return found;
    await sleep(100);
  }
  return undefined;
}

/** Lines for the console: each process's busiest functions. */
export function formatProfiles(title: string, profiles: WindowProfile[]): string {
  const lines = [title];
  for (const p of profiles) {
    lines.push(
      `  ${p.process}: ${p.busyMs} ms busy; by package ${p.packages
        .slice(0, 5)
        .map(([name, s]) => `${name} ${(100 * s).toFixed(0)} %`)
        .join(', ')}`,
    );
    for (const [fn, s] of p.top) lines.push(`    ${(100 * s).toFixed(1).padStart(5)} %  ${fn}`);
  }
  return lines.join('\n');
}
