// Peak RSS of the knowledge *process* while it imports organizations of synthetic entries the
// way `npm run bench`'s search-scale section does (1k, 10k, then 100k entries, each its own
// organization, `batch` entries per UpsertEntries call, a few searches after each import), for
// one or more builds one after another. Per import it prints the peak VmRSS (sampled every
// 100 ms) and the peaks of its parts from inside the process (bench/lib/memory-peaks-preload.mjs:
// heap, array buffers, young generation, memory outside V8's heap), so a peak can be
// attributed; then the time a restart takes to load it all again (the journal's replay) and the
// restart's peak RSS. Not a test.
//
//   npx tsx services/knowledge/bench/import-rss.ts [sizes=1000,10000,100000] [batch=1000]
//     [tree…=.]
//
// KNOWLEDGE_ENV='{"K":"V"}' adds to the services' environment (e.g. V8_FLAGS).
import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { callUnary, checkHealth, createGrpcClient } from '@support-agent/shared';
import { knowledge } from '@support-agent/proto';
import { rssMb } from '../../../bench/lib/measure.js';
import { entry, queryFor } from '../../../bench/synthetic-kb.js';
import { spawnKnowledge } from './knowledge-process.js';

const [sizesArg = '1000,10000,100000', batchArg = '1000', ...trees] = process.argv.slice(2);
const sizes = sizesArg.split(',').map(Number);
const batch = Number(batchArg);
const roots = (trees.length > 0 ? trees : ['.']).map((t) => resolve(t));
const extraEnv = JSON.parse(process.env.KNOWLEDGE_ENV ?? '{}') as Record<string, string>;
const SETTLE_MS = Number(process.env.SETTLE_MS ?? 12_000);
const preload = `--import=${resolve('bench/lib/memory-peaks-preload.mjs')}`;

interface Running {
  child: ChildProcess;
  address: string;
  /** Asks the process for the peaks of its memory parts since the last ask. */
  memPeaks: () => Promise<string>;
  /** Peak VmRSS (MB) since start, sampled every 100 ms. */
  rss: { peak: number };
  /** Milliseconds from spawn until its health check answered. */
  startMs: number;
}

async function startService(root: string, dir: string): Promise<Running> {
  const started = performance.now();
  const { child, address } = await spawnKnowledge(
    root,
    dir,
    { NODE_OPTIONS: preload, ...extraEnv },
    ['ignore', 'ignore', 'pipe'],
  );
  const rss = { peak: 0 };
  const sampler = setInterval(() => (rss.peak = Math.max(rss.peak, rssMb(child.pid!) ?? 0)), 100);
  child.once('exit', () => clearInterval(sampler));
  let peaks: (line: string) => void = () => {};
  let stderr = '';
  child.stderr!.on('data', (chunk: Buffer) => {
    stderr += chunk.toString();
    for (let nl = stderr.indexOf('\n'); nl >= 0; nl = stderr.indexOf('\n')) {
      const line = stderr.slice(0, nl);
      stderr = stderr.slice(nl + 1);
      if (line.startsWith('MEMPEAKS ')) peaks(line.slice(9));
      else process.stderr.write(`${line}\n`);
    }
  });
  const memPeaks = () =>
    new Promise<string>((done) => {
      peaks = done;
      child.kill('SIGUSR2');
    });
  for (let i = 0; !(await checkHealth(address)); i++) {
    if (i > 1200 || child.exitCode !== null) throw new Error(`${root}: knowledge did not start`);
    await new Promise((r) => setTimeout(r, 100));
  }
  return { child, address, memPeaks, rss, startMs: performance.now() - started };
}

async function stopService(s: Running): Promise<void> {
  s.child.kill('SIGTERM');
  await new Promise((r) => s.child.once('exit', r));
}

for (const root of roots) {
  const dir = mkdtempSync(join(tmpdir(), 'kb-import-rss-'));
  const service = await startService(root, dir);
  const { child, address, memPeaks } = service;
  const client = createGrpcClient(knowledge.KnowledgeServiceClient, address);
  await memPeaks(); // start the parts' peaks over
  for (const size of sizes) {
    const all = Array.from({ length: size }, (_, i) => entry(i));
    let peak = 0;
    const sampler = setInterval(() => (peak = Math.max(peak, rssMb(child.pid!) ?? 0)), 100);
    const started = performance.now();
    for (let i = 0; i < all.length; i += batch) {
      await callUnary(
        client.upsertEntries.bind(client),
        { orgId: `search-${size}`, entries: all.slice(i, i + batch) },
        { timeoutMs: 120_000 },
      );
    }
    const seconds = (performance.now() - started) / 1000;
    clearInterval(sampler);
    const parts = await memPeaks();
    for (let i = 0; i < 200; i++)
      await callUnary(client.search.bind(client), {
        orgId: `search-${size}`,
        query: queryFor(all[(i * 7919) % all.length]!.question),
        limit: 5,
      });
    // V8's memory reducer collects a quiet heap after a few seconds: what the import left.
    await memPeaks();
    await new Promise((r) => setTimeout(r, SETTLE_MS));
    const settled = await memPeaks();
    console.log(
      `${root}: import of ${size} entries (${batch} per call) in ${seconds.toFixed(1)} s: peak RSS ${peak.toFixed(0)} MB; parts' peaks (MB) ${parts}; ${SETTLE_MS / 1000} s later ${settled}`,
    );
  }
  client.close();
  await stopService(service);
  // A restart replays the journal of everything imported (in one stretch).
  const again = await startService(root, dir);
  console.log(
    `${root}: restart on ${sizes.reduce((a, b) => a + b, 0)} entries healthy after ${(again.startMs / 1000).toFixed(1)} s: peak RSS ${again.rss.peak.toFixed(0)} MB; parts' peaks (MB) ${await again.memPeaks()}`,
  );
  await stopService(again);
  rmSync(dir, { recursive: true, force: true });
}
