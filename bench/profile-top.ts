// Prints the top frames of a V8 CPU profile (`node --cpu-prof`, e.g. from BENCH_CPU_PROF=1):
// self time per function, and inclusive time per function.
//
//   npx tsx bench/profile-top.ts bench/results/profiles-…/real/CPU.….cpuprofile [top=25]
//   … --callers <function>     where the time of one function comes from
import { readFileSync } from 'node:fs';
import { callersOf, summarizeProfile, type CpuProfile } from './lib/profile-summary.js';

const file = process.argv[2];
if (!file) {
  console.error('usage: profile-top.ts <file.cpuprofile> [top] [--callers fn]');
  process.exit(2);
}
const top = Number(/^\d+$/.test(process.argv[3] ?? '') ? process.argv[3] : 25);
const profile = JSON.parse(readFileSync(file, 'utf8')) as CpuProfile;
const summary = summarizeProfile(profile, top);

const print = (title: string, rows: [string, number][]) => {
  console.log(`\n${title} (of ${(summary.totalMs / 1000).toFixed(1)} s sampled)`);
  for (const [l, share] of rows) console.log(`${(100 * share).toFixed(1).padStart(6)} %  ${l}`);
};
print('self time by package', summary.byPackage);
print('self time', summary.self);
print('inclusive time', summary.inclusive);

const fnAt = process.argv.indexOf('--callers');
if (fnAt > 0) {
  const fn = process.argv[fnAt + 1]!;
  print(`callers of ${fn}`, callersOf(profile, fn, top));
}
