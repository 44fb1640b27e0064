// Summaries of V8 CPU profiles (`.cpuprofile`): self time by package and by function, and
// inclusive time by function. Used by bench/profile-top.ts and by bench/run.ts, which prints
// where the gateway's and knowledge's CPU goes during a search run.

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

export interface ProfileSummary {
  /** Sampled time, ms (idle included). */
  totalMs: number;
  /** Share of the sampled time (0–1) per package, per function (self) and per function with callees. */
  byPackage: [string, number][];
  self: [string, number][];
  inclusive: [string, number][];
}

const label = (n: ProfileNode) => {
  const url = n.callFrame.url.replace(/^.*\/(node_modules|services|packages)\//, '$1/');
  return `${n.callFrame.functionName || '(anonymous)'} ${url}:${n.callFrame.lineNumber + 1}`;
};

/** The package (node_modules/<pkg>, services/<x>, node:<module>) a frame belongs to. */
const packageOf = (n: ProfileNode) => {
  const url = n.callFrame.url;
  const m =
    /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url) ?? /(services\/[^/]+|packages\/[^/]+)/.exec(url);
  if (m) return m[1]!;
  if (url.startsWith('node:')) return url.split('/')[0]!;
  return n.callFrame.functionName.startsWith('(') ? n.callFrame.functionName : '(native)';
};

const ranked = (m: Map<string, number>, total: number, top: number): [string, number][] =>
  [...m]
    .sort((a, b) => b[1] - a[1])
    .slice(0, top)
    .map(([k, t]) => [k, t / total]);

export function summarizeProfile(profile: CpuProfile, top = 25): ProfileSummary {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const parent = new Map<number, number>();
  for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const self = new Map<string, number>();
  const byPackage = new Map<string, number>();
  const inclusive = new Map<string, number>();
  let total = 0;
  profile.samples.forEach((id, i) => {
    const dt = profile.timeDeltas[i] ?? 0;
    total += dt;
    const node = byId.get(id)!;
    self.set(label(node), (self.get(label(node)) ?? 0) + dt);
    byPackage.set(packageOf(node), (byPackage.get(packageOf(node)) ?? 0) + dt);
    const seen = new Set<string>();
    for (let cur: number | undefined = id; cur !== undefined; cur = parent.get(cur)) {
      const l = label(byId.get(cur)!);
      if (seen.has(l)) continue;
      seen.add(l);
      inclusive.set(l, (inclusive.get(l) ?? 0) + dt);
    }
  });
  const t = total || 1;
  return {
    totalMs: total / 1000,
    byPackage: ranked(byPackage, t, top),
    self: ranked(self, t, top),
    inclusive: ranked(inclusive, t, top),
  };
}

/** Self time of the busiest functions, as shares of the process's busy (non-idle) time. */
export function busyShares(summary: ProfileSummary): [string, number][] {
  const idle = summary.self.find(([l]) => l.startsWith('(idle)'))?.[1] ?? 0;
  const busy = 1 - idle || 1;
  return summary.self.filter(([l]) => !l.startsWith('(idle)')).map(([l, s]) => [l, s / busy]);
}

/** `where the callers of one function come from` (6 frames up, skipping node internals). */
export function callersOf(profile: CpuProfile, fn: string, top = 25): [string, number][] {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const parent = new Map<number, number>();
  for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const paths = new Map<string, number>();
  let fnTotal = 0;
  profile.samples.forEach((id, i) => {
    const node = byId.get(id)!;
    if (node.callFrame.functionName !== fn) return;
    const dt = profile.timeDeltas[i] ?? 0;
    fnTotal += dt;
    const chain: string[] = [];
    for (let cur = parent.get(id); cur !== undefined && chain.length < 6; cur = parent.get(cur)) {
      const n = byId.get(cur)!;
      if (n.callFrame.url.startsWith('node:') || n.callFrame.url === '') continue;
      chain.push(label(n));
    }
    const key = chain.join(' < ');
    paths.set(key, (paths.get(key) ?? 0) + dt);
  });
  return ranked(paths, fnTotal || 1, top);
}
