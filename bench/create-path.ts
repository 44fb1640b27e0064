// A focused experiment on the create path: MariaDB, Redis, NATS, the gateway and the
// tickets service only (no consumers), autocannon POST /tickets with an Idempotency-Key.
// Prints requests/s, latency and CPU ms per request of every process.
//   npx tsx bench/create-path.ts [seconds=10] [connections=32]
// Knobs shared by the experiments (logs, NODE_OPTIONS, service env, CPU profiles):
// bench/lib/experiment.ts.
import type autocannon from 'autocannon';
import { randomUUID } from 'node:crypto';
import { startExperiment } from './lib/experiment.js';
import { autocannonRun } from './lib/measure.js';

const seconds = Number(process.argv[2] ?? 10);
const connections = Number(process.argv[3] ?? 32);

const { stack, key, processes, stop } = await startExperiment('create-path', ['tickets']);
try {
  const opts: autocannon.Options = {
    url: `${stack.baseUrl()}/api/v1/agent/tickets`,
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ content: 'My export to CSV fails with a timeout after 30 seconds.' }),
    requests: [
      {
        setupRequest: (req: autocannon.Request) => ({
          ...req,
          headers: { ...req.headers, 'idempotency-key': randomUUID() },
        }),
      },
    ],
  };
  for (let i = 0; i < Number(process.env.ROUNDS ?? 2); i++) {
    const run = await autocannonRun(
      'create (gateway + tickets only)',
      opts,
      { seconds, connections, maxRequests: 200_000, warmupSeconds: 2 },
      processes,
    );
    console.log(`  ${''.padEnd(40)} peak RSS MB: ${JSON.stringify(run.peakRssMb)}`);
  }
} finally {
  await stop();
}
