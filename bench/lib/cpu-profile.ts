// Reading V8 CPU profiles (`.cpuprofile`, from lib/cpu-profile-preload.mjs): where a process's
// busy time went, by function (self and inclusive) and by package. Shared by the harness's
// profile summary (bench/run.ts) and bench/profile-top.ts.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}

export interface CpuProfile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

/** Busy time of a profile, attributed; shares are of the busy time (idle left out). */
export interface ProfileTimes {
  busyUs: number;
  idleUs: number;
  /** µs by `function url:line`, of samples in that function itself. */
  self: Map<string, number>;
  /** µs by `function url:line`, of samples with that function anywhere on the stack. */
  inclusive: Map<string, number>;
  /** µs by package (node_modules/<pkg>, services/<x>, packages/<x>, node:<module>, V8). */
  byPackage: Map<string, number>;
}

/** The module that starts and stops the profiler inside each service. */
const PRELOAD = 'cpu-profile-preload.mjs';

export function readProfile(file: string): CpuProfile {
  return JSON.parse(readFileSync(file, 'utf8')) as CpuProfile;
}

function label(n: ProfileNode): string {
  const url = n.callFrame.url.replace(/^.*\/(node_modules|services|packages)\//, '$1/');
  return `${n.callFrame.functionName || '(anonymous)'} ${url}:${n.callFrame.lineNumber + 1}`;
}

/** The package (node_modules/<pkg>, services/<x>, node:<module>) a frame belongs to. */
function packageOf(n: ProfileNode): string {
  const url = n.callFrame.url;
  const m =
    /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url) ?? /(services\/[^/]+|packages\/[^/]+)/.exec(url);
  if (m) return m[1]!;
  if (url.startsWith('node:')) return url.split('/')[0]!;
  return n.callFrame.functionName.startsWith('(') ? n.callFrame.functionName : '(native)';
}

/** Attributes every busy sample to its function, its callers and its package. */
export function profileTimes(profile: CpuProfile): ProfileTimes {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const parent = new Map<number, number>();
  for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const times: ProfileTimes = {
    busyUs: 0,
    idleUs: 0,
    self: new Map(),
    inclusive: new Map(),
    byPackage: new Map(),
  };
  const add = (m: Map<string, number>, k: string, dt: number) => m.set(k, (m.get(k) ?? 0) + dt);
  profile.samples.forEach((id, i) => {
    const dt = profile.timeDeltas[i] ?? 0;
    const node = byId.get(id)!;
    // Shares are of the time the process was busy: idle samples would dilute them.
    if (node.callFrame.functionName === '(idle)') {
      times.idleUs += dt;
      return;
    }
    const stack: ProfileNode[] = [];
    for (let cur: number | undefined = id; cur !== undefined; cur = parent.get(cur)) {
      stack.push(byId.get(cur)!);
    }
    // Starting and stopping the profiler (the preload's signal handler) is not the process's.
    if (stack.some((n) => n.callFrame.url.endsWith(PRELOAD))) return;
    times.busyUs += dt;
    add(times.self, label(node), dt);
    add(times.byPackage, packageOf(node), dt);
    for (const l of new Set(stack.map(label))) add(times.inclusive, l, dt);
  });
  return times;
}

/** The `top` largest entries, as [name, share of busy time in %]. */
export function topShares(m: Map<string, number>, busyUs: number, top: number): [string, number][] {
  return [...m]
    .sort((a, b) => b[1] - a[1])
    .slice(0, top)
    .map(([k, us]) => [k, Math.round((1000 * us) / Math.max(1, busyUs)) / 10]);
}

/** What the harness keeps of a profile: busy time and the top packages and functions. */
export interface ProfileSummary {
  busyMs: number;
  /** Busy CPU ms per request of the profiled run (the profiler's own cost included). */
  busyMsPerRequest: number;
  byPackage: [string, number][];
  self: [string, number][];
}

export function summarizeProfile(
  profile: CpuProfile,
  requests: number,
  top: number,
): ProfileSummary {
  const t = profileTimes(profile);
  return {
    busyMs: Math.round(t.busyUs / 1000),
    busyMsPerRequest: Math.round(t.busyUs / Math.max(1, requests)) / 1000,
    byPackage: topShares(t.byPackage, t.busyUs, top),
    self: topShares(t.self, t.busyUs, top),
  };
}

/**
 * Profiles the given processes while `run` runs: each must have been started with
 * lib/cpu-profile-preload.mjs in signal mode (BENCH_PROFILE_ON_SIGNAL=1, BENCH_PROFILE_DIR=dir).
 * SIGUSR2 starts their profilers, a second one stops them; returns each process's profile.
 */
export async function profileDuring<T>(
  dir: string,
  processes: Array<{ name: string; pid: number | undefined }>,
  run: () => Promise<T>,
): Promise<{ result: T; profiles: Map<string, CpuProfile> }> {
  const targets = processes.filter((p): p is { name: string; pid: number } => p.pid !== undefined);
  const before = new Map(targets.map((p) => [p.pid, profilesOf(dir, p.pid)]));
  for (const p of targets) process.kill(p.pid, 'SIGUSR2');
  let result: T;
  try {
    result = await run();
  } finally {
    for (const p of targets) process.kill(p.pid, 'SIGUSR2');
  }
  const profiles = new Map<string, CpuProfile>();
  const deadline = Date.now() + 30_000;
  for (const p of targets) {
    let fresh: string[] = [];
    while (Date.now() < deadline) {
      fresh = profilesOf(dir, p.pid).filter((f) => !before.get(p.pid)!.includes(f));
      if (fresh.length > 0) break;
      await sleep(100);
    }
    if (fresh.length === 0) throw new Error(`no CPU profile from ${p.name} (pid ${p.pid})`);
    profiles.set(p.name, readProfile(join(dir, fresh[0]!)));
  }
  return { result, profiles };
}

function profilesOf(dir: string, pid: number): string[] {
  try {
    return readdirSync(dir).filter((f) => f.endsWith(`.cpuprofile`) && f.includes(`-${pid}-`));
  } catch {
    return [];
  }
}

/** Prints profile summaries: busy ms per request, then the top packages and functions. */
export function printProfiles(title: string, summaries: Record<string, ProfileSummary>): void {
  console.log(`\n${title} (V8 CPU profiles; shares of each process's busy time)`);
  for (const [name, s] of Object.entries(summaries)) {
    console.log(`  ${name}: ${s.busyMsPerRequest} ms busy per request (profiler on)`);
    console.log(`    by package: ${s.byPackage.map(([p, pct]) => `${p} ${pct} %`).join(', ')}`);
    for (const [fn, pct] of s.self) console.log(`    ${pct.toFixed(1).padStart(5)} %  ${fn}`);
  }
}
