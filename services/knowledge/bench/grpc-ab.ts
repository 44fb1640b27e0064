// CPU per search of the knowledge *process* behind gRPC, for two (or more) builds side by side:
// each build's `services/knowledge/dist/main.js` runs as its own process (embedded index, the
// built-in embeddings, metrics on, LOG_LEVEL info, as `npm run bench` starts it), holds the same
// synthetic entries, and is loaded in alternating rounds by the same closed loop of generated
// gRPC clients (`concurrency` calls in flight on one channel, as the gateway holds one), with the
// same queries as the bench's KB search. CPU per search comes from /proc/<pid>/stat over each
// round; medians are compared. Also printed: each round's p50 latency and each process's peak
// RSS (sampled every 250 ms from the start, the import included). Not a test.
//
//   npm run build                      # this tree's dist
//   git worktree add /tmp/base <commit> && (cd /tmp/base && npm ci && npm run build)
//   npx tsx services/knowledge/bench/grpc-ab.ts [entries=1000] [seconds=4] [rounds=5]
//     [concurrency=32] [tree…=/tmp/base .]
//
// KNOWLEDGE_ENV='{"K":"V"}' adds to the services' environment (e.g. V8_FLAGS, NODE_OPTIONS);
// KNOWLEDGE_ENVS='[{"K":"V"},{}]' adds to each tree's environment apart (same order as the
// trees; the same tree may be given twice to compare settings, e.g. NODE_OPTIONS);
// KNOWLEDGE_STDOUT=1 passes their output through (e.g. with NODE_OPTIONS=--trace-gc).
import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { callUnary, checkHealth, createGrpcClient } from '@support-agent/shared';
import { knowledge } from '@support-agent/proto';
import { cpuTicks, median, rssMb } from '../../../bench/lib/measure.js';
import { entry, queryFor, random } from '../../../bench/synthetic-kb.js';
import { spawnKnowledge } from './knowledge-process.js';

const [sizeArg = '1000', secondsArg = '4', roundsArg = '5', concurrencyArg = '32', ...trees] =
  process.argv.slice(2);
const size = Number(sizeArg);
const concurrency = Number(concurrencyArg);
const roots = (trees.length > 0 ? trees : ['/tmp/base', '.']).map((t) => resolve(t));
const extraEnv = JSON.parse(process.env.KNOWLEDGE_ENV ?? '{}') as Record<string, string>;
const treeEnvs = JSON.parse(process.env.KNOWLEDGE_ENVS ?? '[]') as Record<string, string>[];

interface Service {
  root: string;
  child: ChildProcess;
  dir: string;
  client: knowledge.KnowledgeServiceClient;
  rss: { peak: number };
}

async function startService(root: string, treeEnv: Record<string, string>): Promise<Service> {
  const dir = mkdtempSync(join(tmpdir(), 'kb-grpc-ab-'));
  const { child, address } = await spawnKnowledge(root, dir, { ...extraEnv, ...treeEnv }, [
    'ignore',
    process.env.KNOWLEDGE_STDOUT ? 'inherit' : 'ignore',
    'inherit',
  ]);
  const rss = { peak: 0 };
  const sampler = setInterval(() => {
    rss.peak = Math.max(rss.peak, rssMb(child.pid!) ?? 0);
  }, 250);
  sampler.unref();
  for (let i = 0; !(await checkHealth(address)); i++) {
    if (i > 200 || child.exitCode !== null) throw new Error(`${root}: knowledge did not start`);
    await new Promise((r) => setTimeout(r, 100));
  }
  const client = createGrpcClient(knowledge.KnowledgeServiceClient, address);
  return { root, child, dir, client, rss };
}

const entries = Array.from({ length: size }, (_, i) => entry(i));
const queries = Array.from({ length: 500 }, () =>
  queryFor(entries[Math.floor(random() * entries.length)]!.question),
);

const services: Service[] = [];
for (const [t, root] of roots.entries()) {
  const s = await startService(root, treeEnvs[t] ?? {});
  for (let i = 0; i < entries.length; i += 1000) {
    await callUnary(
      s.client.upsertEntries.bind(s.client),
      { orgId: 'bench', entries: entries.slice(i, i + 1000) },
      { timeoutMs: 120_000 },
    );
  }
  services.push(s);
  console.log(`${root}: pid ${s.child.pid}, ${size} entries`);
}

/** `concurrency` searches in flight for `ms` (or `count` searches); returns their latencies. */
async function load(s: Service, ms: number, count = Infinity): Promise<number[]> {
  const until = performance.now() + ms;
  const latencies: number[] = [];
  let n = 0;
  const worker = async () => {
    while (performance.now() < until && n < count) {
      const query = queries[n++ % queries.length]!;
      const started = performance.now();
      await callUnary(s.client.search.bind(s.client), { orgId: 'bench', query, limit: 5 });
      latencies.push(performance.now() - started);
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
  return latencies;
}

for (const s of services) await load(s, 60_000, 3000); // warm-up
const cpu: number[][] = services.map(() => []);
const rates: number[][] = services.map(() => []);
const p50s: number[][] = services.map(() => []);
for (let round = 0; round < Number(roundsArg); round++) {
  for (let k = 0; k < services.length; k++) {
    const j = (k + round) % services.length;
    const s = services[j]!;
    const before = cpuTicks(s.child.pid!)!;
    const started = performance.now();
    const latencies = await load(s, Number(secondsArg) * 1000);
    const seconds = (performance.now() - started) / 1000;
    cpu[j]!.push(((cpuTicks(s.child.pid!)! - before) * 10) / latencies.length);
    rates[j]!.push(latencies.length / seconds);
    p50s[j]!.push(median(latencies));
  }
}
services.forEach((s, j) =>
  console.log(
    `${s.root}${treeEnvs[j] ? ` ${JSON.stringify(treeEnvs[j])}` : ''} (${size} entries, ${concurrency} in flight): knowledge CPU ms per search, median ${median(cpu[j]!).toFixed(3)} (rounds ${cpu[j]!.map((x) => x.toFixed(3)).join(' ')}); searches/s ${rates[j]!.map((x) => x.toFixed(0)).join(' ')}; p50 ms ${p50s[j]!.map((x) => x.toFixed(2)).join(' ')}; peak RSS ${s.rss.peak.toFixed(0)} MB`,
  ),
);
for (const s of services) {
  s.client.close();
  s.child.kill('SIGTERM');
  await new Promise((r) => s.child.once('exit', r));
  rmSync(s.dir, { recursive: true, force: true });
}
