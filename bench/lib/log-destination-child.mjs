// One measured process of bench/log-destination.ts: logs an access line `lines` times through
// pino with the named destination on stdout, in bursts of `burst` lines per event-loop turn
// (the requests one turn of a loaded service finishes), with `work` iterations of
// allocation-free arithmetic before each line (the request's own work, during which an
// asynchronous write can complete). Prints on stderr, as JSON, CPU time and bytes allocated
// per line over the measured lines (after a warm-up), once the destination has written them.
import { GCProfiler } from 'node:v8';
import { pino } from 'pino';

const [variant, burst, lines, work] = [
  process.argv[2],
  Number(process.argv[3]),
  Number(process.argv[4]),
  Number(process.argv[5]),
];
const DESTINATIONS = {
  // No write at all: what building the line costs, subtracted from the others.
  none: () => ({ write() {} }),
  // pino's default (createLogger's): asynchronous sonic-boom on fd 1.
  'async (pino default)': () => undefined,
  sync: () => pino.destination({ dest: 1, sync: true }),
  'async, maxWrite 1 KB': () => pino.destination({ dest: 1, sync: false, maxWrite: 1024 }),
  'async, minLength 4 KB': () => pino.destination({ dest: 1, sync: false, minLength: 4096 }),
};
const options = {
  base: { service: 'gateway' },
  timestamp: pino.stdTimeFunctions.isoTime,
  formatters: { level: (label) => ({ level: label }) },
};
const destination = DESTINATIONS[variant]();
const logger = destination ? pino(options, destination) : pino(options);

let sink = 0;
let n = 0;
function turn() {
  for (let i = 0; i < burst; i++) {
    let x = sink;
    for (let j = 0; j < work; j++) x = (x * 31 + j) | 0;
    sink = x;
    const id = (n++).toString(36);
    const req = {
      id,
      method: 'GET',
      url: '/api/v1/agent/kb/search?limit=5&query=how%20do%20I%20reset%20my%20password',
      remoteAddress: '127.0.0.1',
    };
    logger.info(
      {
        reqId: id,
        req,
        res: { statusCode: 200 },
        responseTime: 3,
        orgId: 'org_2f9c1d7e',
        keyId: 'key_8a41b0c3',
      },
      'request completed',
    );
  }
}
async function run(count) {
  for (let done = 0; done < count; done += burst) {
    turn();
    await new Promise((resolve) => setImmediate(resolve));
  }
}

await run(Math.min(lines, 20_000));
const profiler = new GCProfiler();
profiler.start();
const cpu0 = process.cpuUsage();
const used0 = process.memoryUsage().heapUsed;
const n0 = n;
await run(lines);
// An asynchronous destination may still hold lines: give it time to write them (idle time
// costs no CPU; the parent checks that every line arrived).
await new Promise((resolve) => setTimeout(resolve, 100));
const cpu = process.cpuUsage(cpu0);
let allocated = 0;
let previousAfter = used0;
for (const gc of profiler.stop().statistics) {
  allocated += Math.max(0, gc.beforeGC.heapStatistics.usedHeapSize - previousAfter);
  previousAfter = gc.afterGC.heapStatistics.usedHeapSize;
}
allocated += Math.max(0, process.memoryUsage().heapUsed - previousAfter);
const measured = n - n0;
process.stderr.write(
  `${JSON.stringify({ cpuUs: (cpu.user + cpu.system) / measured, bytes: allocated / measured, total: n })}\n`,
);
