// CPU per request of a `node:http2` client and server in one process, each request made
// either as Node makes it or inside withLeanAsyncBind (packages/shared/src/http2-request-bind.ts:
// what every gRPC client request of the services goes through), in alternating rounds.
// Prints µs of CPU (process.cpuUsage) per request, client and server together, per round and
// the medians. Not a test.
//   npx tsx bench/http2-request.ts [requests per round=20000] [rounds=6] [in flight=16]
import http2 from 'node:http2';
import type { AddressInfo } from 'node:net';
import { withLeanAsyncBind } from '@support-agent/shared';
import { median } from './lib/measure.js';

const perRound = Number(process.argv[2] ?? 20_000);
const rounds = Number(process.argv[3] ?? 6);
const inFlight = Number(process.argv[4] ?? 16);

const server = http2.createServer();
server.on('stream', (stream) => {
  stream.respond({ ':status': 200 });
  stream.end('ok');
});
await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
const session = http2.connect(`http://127.0.0.1:${(server.address() as AddressInfo).port}`);
await new Promise((resolve) => session.once('connect', resolve));

const ways: Record<string, () => http2.ClientHttp2Stream> = {
  node: () => session.request({ ':path': '/' }),
  lean: () => withLeanAsyncBind(() => session.request({ ':path': '/' })),
};

async function round(request: () => http2.ClientHttp2Stream): Promise<number> {
  let started = 0;
  const one = () =>
    new Promise<void>((resolve, reject) => {
      const stream = request();
      stream.on('data', () => {});
      stream.on('end', resolve);
      stream.on('error', reject);
      stream.end();
    });
  const worker = async () => {
    while (started++ < perRound) await one();
  };
  const before = process.cpuUsage();
  await Promise.all(Array.from({ length: inFlight }, worker));
  const used = process.cpuUsage(before);
  return (used.user + used.system) / perRound;
}

const results: Record<string, number[]> = { node: [], lean: [] };
for (const way of Object.values(ways)) await round(way); // warm-up
for (let r = 0; r < rounds; r++) {
  const order = r % 2 === 0 ? ['node', 'lean'] : ['lean', 'node'];
  for (const name of order) results[name]!.push(await round(ways[name]!));
  console.log(
    `round ${r + 1}: ${order.map((n) => `${n} ${results[n]!.at(-1)!.toFixed(1)}`).join(', ')} µs/request`,
  );
}
console.log(
  `median µs of CPU per request (client + server): node ${median(results.node!).toFixed(1)}, lean ${median(results.lean!).toFixed(1)}`,
);
session.close();
server.close();
