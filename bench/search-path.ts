// A focused experiment on the search path: MariaDB and Redis (keys, rate limits), the gateway
// and the knowledge service (plus tickets, which the gateway's readiness needs), a KB of 1,000
// synthetic entries; autocannon GET /kb/search next to the bare Node server answering the
// same bytes. Prints requests/s, latency and CPU ms per request of every process, and the
// ratio the target is about.
//   npx tsx bench/search-path.ts [seconds=10] [connections=32]
// MODERATE_RATE=n: first the gateway overhead at n req/s (open loops, direct gRPC vs through
// the gateway, ROUNDS rounds, medians); EXTRA=1: also GET /healthz and an unauthenticated
// search. Knobs shared by the experiments (logs, NODE_OPTIONS, service env, CPU profiles):
// bench/lib/experiment.ts.
import type autocannon from 'autocannon';
import { api } from '../test/support/stack.js';
import { BareServer, DirectGrpc, GrpcHopServer } from './lib/baselines.js';
import { startExperiment } from './lib/experiment.js';
import { autocannonRun, httpCaller, median, openLoop, type ProcessRef } from './lib/measure.js';
import { entry, queryFor, random } from './synthetic-kb.js';

const seconds = Number(process.argv[2] ?? 10);
const connections = Number(process.argv[3] ?? 32);

const {
  stack,
  key,
  processes: meter,
  stop,
} = await startExperiment('search-path', ['tickets', 'knowledge']);
let bare: BareServer | undefined;
let hop: GrpcHopServer | undefined;
try {
  const entries = Array.from({ length: 1000 }, (_, i) => entry(i));
  await stack.admin('POST', '/admin/v1/orgs/bench/kb/entries', entries);
  const queries = Array.from({ length: 500 }, () =>
    queryFor(entries[Math.floor(random() * entries.length)]!.question),
  );
  const path = (q: string) => `/api/v1/agent/kb/search?limit=5&query=${encodeURIComponent(q)}`;
  const sample = await api(stack.baseUrl(), 'GET', path(queries[0]!), { key });
  if (sample.status !== 200) throw new Error(`search failed: ${sample.status} ${sample.text}`);
  bare = await BareServer.start(sample.text);
  hop = await GrpcHopServer.start(sample.text);
  const processes = (): ProcessRef[] =>
    meter([...(bare?.processRefs() ?? []), ...(hop?.processRefs() ?? [])]);
  let q = 0;
  const opts: autocannon.Options = {
    url: stack.baseUrl(),
    headers: { authorization: `Bearer ${key}` },
    requests: [
      { setupRequest: (req: autocannon.Request) => ({ ...req, path: path(queries[q++ % 500]!) }) },
    ],
  };
  const load = { seconds, connections, maxRequests: 500_000, warmupSeconds: 2 };
  const rate = Number(process.env.MODERATE_RATE ?? 0);
  if (rate > 0) {
    // Gateway overhead at moderate load: the same open-loop rate direct and through the gateway.
    const direct = new DirectGrpc({
      knowledge: stack.addresses.KNOWLEDGE_ADDR!,
      tickets: stack.addresses.TICKETS_ADDR!,
      digest: stack.addresses.TICKETS_ADDR!,
    });
    const client = httpCaller(stack.baseUrl(), 64);
    const auth = { authorization: `Bearer ${key}` };
    const d50: number[] = [];
    const d99: number[] = [];
    for (let round = 0; round < Number(process.env.ROUNDS ?? 3); round++) {
      const a = await openLoop(
        'direct (moderate)',
        rate,
        seconds,
        1e6,
        async (i) => {
          await direct.search('bench', queries[i % 500]!);
          return true;
        },
        processes,
      );
      const g = await openLoop(
        'gateway (moderate)',
        rate,
        seconds,
        1e6,
        (i) => client.request('GET', path(queries[i % 500]!), auth),
        processes,
      );
      d50.push(g.p50 - a.p50);
      d99.push(g.p99 - a.p99);
    }
    console.log(
      `  overhead p50 +${median(d50).toFixed(2)} ms, p99 +${median(d99).toFixed(2)} ms (medians of rounds)`,
    );
    client.close();
    direct.close();
  }
  for (let i = 0; i < Number(process.env.ROUNDS ?? 1); i++) {
    const b = await autocannonRun(
      `bare node (${sample.text.length} B)`,
      { url: bare.url },
      load,
      processes,
    );
    const h = await autocannonRun('http + one no-op grpc hop', { url: hop.url }, load, processes);
    const s = await autocannonRun('search via gateway', opts, load, processes);
    if (process.env.EXTRA === '1') {
      await autocannonRun('GET /healthz', { url: `${stack.baseUrl()}/healthz` }, load, processes);
      await autocannonRun(
        'search, no key (401)',
        { url: `${stack.baseUrl()}${path(queries[0]!)}` },
        load,
        processes,
      );
    }
    console.log(
      `  ratio ${(s.rps / b.rps).toFixed(3)} (ceiling of the design, one no-op hop: ${(h.rps / b.rps).toFixed(3)}); peak RSS MB ${JSON.stringify(s.peakRssMb)}`,
    );
  }
} finally {
  await bare?.stop();
  await hop?.stop();
  await stop();
}
