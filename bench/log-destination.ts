// What writing a log line costs with each pino destination the services could use: CPU time
// and bytes allocated per line (above building the line without writing it), with stdout a
// file (as in the benches' service logs) or a pipe (as under a container runtime), and log
// lines coming in bursts of 1, 8 and 32 per event-loop turn (a loaded gateway finishes several
// requests per turn, each writing its access line). pino's default asynchronous destination
// appends each line logged while a write is in flight to one pending string and measures it
// with Buffer.byteLength, which flattens it: a copy of the whole pending text per line, so its
// cost grows with the burst. Each measurement is its own process (lib/log-destination-child.mjs),
// variants alternating within each round; medians of the rounds. Also checks that every line
// arrived.
//   npx tsx bench/log-destination.ts [rounds=3] [lines=64000]
import { spawn } from 'node:child_process';
import { closeSync, mkdtempSync, openSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { median } from './lib/measure.js';

const rounds = Number(process.argv[2] ?? 3);
const lines = Number(process.argv[3] ?? 64_000);
const VARIANTS = [
  'none',
  'async (pino default)',
  'sync',
  'async, maxWrite 1 KB',
  'async, minLength 4 KB',
];
const BURSTS = [1, 8, 32];
const WORK = 4000; // iterations of arithmetic per line: ≈ 5-10 µs
const CHILD = join(import.meta.dirname, 'lib', 'log-destination-child.mjs');

interface Sample {
  cpuUs: number;
  bytes: number;
}

/** One child run; stdout a file or a pipe drained here. Throws when lines went missing. */
async function measure(
  variant: string,
  burst: number,
  to: 'file' | 'pipe',
  dir: string,
): Promise<Sample> {
  const file = join(dir, 'out.log');
  const fd = to === 'file' ? openSync(file, 'w') : undefined;
  const child = spawn(
    process.execPath,
    [CHILD, variant, String(burst), String(lines), String(WORK)],
    {
      stdio: ['ignore', fd ?? 'pipe', 'pipe'],
    },
  );
  let written = 0;
  child.stdout?.on('data', (chunk: Buffer) => {
    for (let i = chunk.indexOf(10); i !== -1; i = chunk.indexOf(10, i + 1)) written++;
  });
  let stderr = '';
  child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
  if (fd !== undefined) {
    closeSync(fd);
    written = readFileSync(file, 'utf8').split('\n').length - 1;
  }
  if (code !== 0) throw new Error(`${variant}: exit ${code}: ${stderr}`);
  const result = JSON.parse(stderr) as Sample & { total: number };
  const expected = variant === 'none' ? 0 : result.total;
  if (written !== expected) throw new Error(`${variant}: ${written} lines of ${expected} arrived`);
  return result;
}

const dir = mkdtempSync(join(tmpdir(), 'log-destination-'));
try {
  for (const to of ['file', 'pipe'] as const) {
    const samples = new Map<string, Sample[]>();
    for (let round = 0; round < rounds; round++)
      for (const burst of BURSTS)
        for (const variant of VARIANTS) {
          const key = `${burst}\t${variant}`;
          samples.set(key, [...(samples.get(key) ?? []), await measure(variant, burst, to, dir)]);
        }
    console.log(
      `\nstdout a ${to}: per line, above "none" (medians of ${rounds} rounds of ${lines} lines)`,
    );
    console.log('burst\tdestination\tCPU µs\tKB allocated');
    for (const burst of BURSTS) {
      const base = samples.get(`${burst}\tnone`)!;
      for (const variant of VARIANTS.slice(1)) {
        const s = samples.get(`${burst}\t${variant}`)!;
        const cpu = median(s.map((x) => x.cpuUs)) - median(base.map((x) => x.cpuUs));
        const kb = (median(s.map((x) => x.bytes)) - median(base.map((x) => x.bytes))) / 1024;
        console.log(`${burst}\t${variant.padEnd(22)}\t${cpu.toFixed(2)}\t${kb.toFixed(2)}`);
      }
    }
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}
