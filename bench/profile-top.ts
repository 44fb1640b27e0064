// Prints the top frames of a V8 CPU profile (`node --cpu-prof`, e.g. from BENCH_CPU_PROF=1):
// self time per function, and inclusive time per function.
//
//   npx tsx bench/profile-top.ts bench/results/profiles-…/real/CPU.….cpuprofile [top=25]
import { readFileSync } from 'node:fs';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}

interface Profile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

const file = process.argv[2];
if (!file) {
  console.error('usage: profile-top.ts <file.cpuprofile> [top]');
  process.exit(2);
}
const top = Number(/^\d+$/.test(process.argv[3] ?? '') ? process.argv[3] : 25);
const profile = JSON.parse(readFileSync(file, 'utf8')) as Profile;

const byId = new Map(profile.nodes.map((n) => [n.id, n]));
const parent = new Map<number, number>();
for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);

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
  if (url.startsWith('node:'))
    return url.split('/')[0]!.replace(/^node:internal$/, 'node:internal');
  return n.callFrame.functionName.startsWith('(') ? n.callFrame.functionName : '(native)';
};

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

const print = (title: string, m: Map<string, number>) => {
  console.log(`\n${title} (of ${(total / 1e6).toFixed(1)} s sampled)`);
  for (const [l, t] of [...m].sort((a, b) => b[1] - a[1]).slice(0, top)) {
    console.log(`${((100 * t) / total).toFixed(1).padStart(6)} %  ${l}`);
  }
};
print('self time by package', byPackage);
print('self time', self);
print('inclusive time', inclusive);

// `--callers <function>`: where the time of one function comes from (its callers' stacks, 6
// frames up, skipping node internals).
const callersOf = process.argv.indexOf('--callers');
if (callersOf > 0) {
  const fn = process.argv[callersOf + 1]!;
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
  console.log(`\ncallers of ${fn} (${((100 * fnTotal) / total).toFixed(1)} % of samples)`);
  for (const [chain, t] of [...paths].sort((a, b) => b[1] - a[1]).slice(0, top)) {
    console.log(`${((100 * t) / fnTotal).toFixed(1).padStart(6)} %  ${chain}`);
  }
}
