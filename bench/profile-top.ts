// Prints the top frames of a V8 CPU profile (`node --cpu-prof`, e.g. from BENCH_CPU_PROF=1):
// self time per function, and inclusive time per function, as shares of the busy time.
//
//   npx tsx bench/profile-top.ts bench/results/profiles-…/real/CPU.….cpuprofile [top=25]
import { profileTimes, readProfile, topShares } from './lib/cpu-profile.js';

const file = process.argv[2];
if (!file) {
  console.error('usage: profile-top.ts <file.cpuprofile> [top] [--callers <function>]');
  process.exit(2);
}
const top = Number(/^\d+$/.test(process.argv[3] ?? '') ? process.argv[3] : 25);
const profile = readProfile(file);
const times = profileTimes(profile);

const print = (title: string, m: Map<string, number>) => {
  console.log(
    `\n${title} (of ${(times.busyUs / 1e6).toFixed(1)} s busy; ${(times.idleUs / 1e6).toFixed(1)} s idle left out)`,
  );
  for (const [l, share] of topShares(m, times.busyUs, top)) {
    console.log(`${share.toFixed(1).padStart(6)} %  ${l}`);
  }
};
print('self time by package', times.byPackage);
print('self time', times.self);
print('inclusive time', times.inclusive);

// `--callers <function>`: where the time of one function comes from (its callers' stacks, 6
// frames up, skipping node internals).
const callersOf = process.argv.indexOf('--callers');
if (callersOf > 0) {
  const fn = process.argv[callersOf + 1]!;
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const parent = new Map<number, number>();
  for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const label = (id: number) => {
    const { functionName, url, lineNumber } = byId.get(id)!.callFrame;
    const short = url.replace(/^.*\/(node_modules|services|packages)\//, '$1/');
    return `${functionName || '(anonymous)'} ${short}:${lineNumber + 1}`;
  };
  const paths = new Map<string, number>();
  let fnTotal = 0;
  profile.samples.forEach((id, i) => {
    if (byId.get(id)!.callFrame.functionName !== fn) return;
    const dt = profile.timeDeltas[i] ?? 0;
    fnTotal += dt;
    const chain: string[] = [];
    for (let cur = parent.get(id); cur !== undefined && chain.length < 6; cur = parent.get(cur)) {
      const url = byId.get(cur)!.callFrame.url;
      if (url.startsWith('node:') || url === '') continue;
      chain.push(label(cur));
    }
    const key = chain.join(' < ');
    paths.set(key, (paths.get(key) ?? 0) + dt);
  });
  console.log(`\ncallers of ${fn} (${((100 * fnTotal) / times.busyUs).toFixed(1)} % of busy time)`);
  for (const [chain, share] of topShares(paths, fnTotal, top)) {
    console.log(`${share.toFixed(1).padStart(6)} %  ${chain}`);
  }
}
