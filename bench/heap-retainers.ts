// What keeps the gateway's objects alive past their request (issue 21: the p99 overhead at
// moderate load is the gateway's scavenges, and a scavenge's pause is what it copies). The
// gateway runs with tickets and knowledge (bench/lib/experiment.ts) under an open loop at a
// moderate rate; during the loop it writes three heap snapshots GAP ms apart
// (lib/heap-snapshot-preload.mjs), and one more a second after the loop ended. The objects
// allocated between snapshot 1 and 2 that are still alive in snapshot 3 lived long enough to be
// promoted: lib/heap-diff.ts groups them by the older object that holds them (the boundary).
// The idle snapshot shows what the last requests left behind on idle keep-alive connections.
//   npx tsx bench/heap-retainers.ts [seconds=14]
// RATE=300 (req/s), OP=search|list, GAP=2000 (ms), CONNECTIONS=256 (the load client's
// maxSockets, as bench/tail-path.ts), GATEWAY_ENV='K=V …', TOP=12, KEEP=1 keeps the snapshots.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { envAssignments, startExperiment } from './lib/experiment.js';
import { boundaries, byLabel, idsOf, readSnapshot, type Snapshot } from './lib/heap-diff.js';
import { httpCaller, openLoop } from './lib/measure.js';
import { seedBenchOrg } from './lib/seed.js';

const SECONDS = Number(process.argv[2] ?? 14);
const RATE = Number(process.env.RATE ?? 300);
const OP = process.env.OP ?? 'search';
const GAP = Number(process.env.GAP ?? 2000);
const TOP = Number(process.env.TOP ?? 12);
const snapshotDir = mkdtempSync(join(tmpdir(), 'heap-retainers-'));

const { stack, backends, key, stop } = await startExperiment(
  'heap-retainers',
  ['tickets', 'knowledge'],
  'info',
);
const client = httpCaller(stack.baseUrl(), Number(process.env.CONNECTIONS ?? 256));
const files: string[] = [];
let completed = 0;
const marks: number[] = [];
try {
  const queries = await seedBenchOrg(stack, backends.mysql.url);
  const gateway = stack.gateways[0]!;
  await gateway.stop();
  gateway.start({
    ...envAssignments(process.env.GATEWAY_ENV),
    NODE_OPTIONS: [
      gateway.env.NODE_OPTIONS,
      `--import=${resolve('bench/lib/heap-snapshot-preload.mjs')}`,
    ]
      .filter(Boolean)
      .join(' '),
    BENCH_SNAPSHOT_DIR: snapshotDir,
  });
  await stack.waitForGateway(0);
  const auth = { authorization: `Bearer ${key}` };
  const call = async (i: number) => {
    const ok = await (OP === 'list'
      ? client.request('GET', '/api/v1/agent/tickets?limit=20', auth)
      : client.request(
          'GET',
          `/api/v1/agent/kb/search?limit=5&query=${encodeURIComponent(queries[i % 500]!)}`,
          auth,
        ));
    completed++;
    return ok;
  };
  const snap = async () => {
    const from = gateway.logs().length;
    process.kill(gateway.pid!, 'SIGWINCH');
    for (let i = 0; i < 600; i++) {
      await sleep(50);
      const m = /HEAPSNAPSHOT (.*)/.exec(gateway.logs().slice(from));
      if (m) {
        files.push(m[1]!);
        marks.push(completed);
        return;
      }
    }
    throw new Error('no heap snapshot within 30 s');
  };
  const load = openLoop(
    `${OP} via gateway at ${RATE} req/s`,
    RATE,
    SECONDS,
    1e6,
    call,
    () => [],
    3,
  );
  await sleep(3000 + Math.min(5000, SECONDS * 300));
  for (let i = 0; i < 3; i++) {
    if (i > 0) await sleep(GAP);
    await snap();
  }
  await load;
  await sleep(1000);
  await snap();
} finally {
  client.close();
  await stop();
}

report();
if (process.env.KEEP !== '1') rmSync(snapshotDir, { recursive: true, force: true });
else console.log(`snapshots: ${snapshotDir}`);

function report(): void {
  const kb = (b: number) => (b / 1024).toFixed(1);
  const ids1 = idsOf(readSnapshot(files[0]!));
  const s3 = readSnapshot(files[2]!);
  const ids3 = idsOf(s3);
  const s2 = readSnapshot(files[1]!);
  const requests = marks[1]! - marks[0]!;
  const fresh = (n: number) => !ids1.has(s2.ids[n]!);
  const groups: Array<[string, (n: number) => boolean]> = [
    [
      `allocated between snapshots 1 and 2 (${requests} requests), alive in 3 (${GAP} ms later)`,
      (n) => fresh(n) && ids3.has(s2.ids[n]!),
    ],
    [
      `allocated between snapshots 1 and 2, alive in 2, dead by 3`,
      (n) => fresh(n) && !ids3.has(s2.ids[n]!),
    ],
  ];
  for (const [title, select] of groups) print(s2, ids1, select, title, requests, kb);
  const s4 = readSnapshot(files[3]!);
  const idle = (n: number) => !ids3.has(s4.ids[n]!);
  print(
    s4,
    ids3,
    idle,
    'idle, 1 s after the loop: allocated after snapshot 3 and still alive',
    undefined,
    kb,
  );
}

function print(
  s: Snapshot,
  old: Set<number>,
  select: (n: number) => boolean,
  title: string,
  requests: number | undefined,
  kb: (b: number) => string,
): void {
  const labels = byLabel(s, select);
  const total = labels.reduce((sum, [, , b]) => sum + b, 0);
  const count = labels.reduce((sum, [, c]) => sum + c, 0);
  console.log(
    `\n== ${title}: ${count} objects, ${kb(total)} KB${requests ? `, ${(total / requests / 1024).toFixed(2)} KB per request` : ''}`,
  );
  console.log('  by constructor:');
  for (const [label, c, b] of labels.slice(0, TOP))
    console.log(`    ${kb(b).padStart(8)} KB ${String(c).padStart(7)}  ${label}`);
  console.log('  by what holds them (older object --edge--> first new object):');
  for (const g of boundaries(s, old, select).slice(0, TOP))
    console.log(
      `    ${kb(g.bytes).padStart(8)} KB ${String(g.count).padStart(7)}  ${g.key}\n${' '.repeat(24)}via ${g.path}`,
    );
}
