// Measurement helpers of the benchmark harness (bench/run.ts): autocannon runs, a precise
// closed-loop client (sub-millisecond latencies, for the moderate-load comparisons), and
// the RSS / CPU samplers that read /proc/<pid>/status and /proc/<pid>/stat.
import autocannon from 'autocannon';
import { readFileSync } from 'node:fs';
import http from 'node:http';
import { loadavg } from 'node:os';
import { setTimeout as sleep } from 'node:timers/promises';

/** One measured run: throughput, latency percentiles (ms), failures, peak RSS per process. */
export interface RunResult {
  name: string;
  /**
   * autocannon, the in-process closed loop (finer latency resolution) or the in-process open
   * loop (a fixed arrival rate; `connections` is then the most requests in flight at once).
   */
  client: 'autocannon' | 'loop' | 'open';
  /** Open loop only: the arrival rate asked for, requests/s. */
  targetRate?: number;
  connections: number;
  seconds: number;
  requests: number;
  rps: number;
  p50: number;
  p90: number;
  p99: number;
  /** Connection errors and timeouts, plus non-2xx answers. */
  errors: number;
  non2xx: number;
  /** Peak VmRSS (MB) of each sampled process during the run. */
  peakRssMb: Record<string, number>;
  /** CPU time (user + system) per completed request, ms, by process. */
  cpuMsPerRequest: Record<string, number>;
  loadavg: number[];
}

export interface ProcessRef {
  name: string;
  pid: number | undefined;
}

/** VmRSS of a process in MB, or undefined when it is gone. */
export function rssMb(pid: number): number | undefined {
  try {
    const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) / 1024 : undefined;
  } catch {
    return undefined;
  }
}

/** User + system CPU time of a process in clock ticks (USER_HZ, 100 per second). */
export function cpuTicks(pid: number): number | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // Fields after the command name (which may contain spaces) start after the last ')'.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return Number(fields[11]) + Number(fields[12]);
  } catch {
    return undefined;
  }
}

/** CPU time of each process between start() and stop(), per request. */
export class CpuMeter {
  private readonly before = new Map<string, number>();

  constructor(private readonly processes: () => ProcessRef[]) {}

  start(): this {
    for (const p of this.processes()) {
      const t = p.pid === undefined ? undefined : cpuTicks(p.pid);
      if (t !== undefined) this.before.set(p.name, t);
    }
    return this;
  }

  /** ms of CPU per request (ticks are 10 ms) of every process that used any. */
  perRequest(requests: number): Record<string, number> {
    const out: Record<string, number> = {};
    for (const p of this.processes()) {
      const t = p.pid === undefined ? undefined : cpuTicks(p.pid);
      const b = this.before.get(p.name);
      if (t === undefined || b === undefined || t === b) continue;
      out[p.name] = Math.round(((t - b) * 10 * 1000) / Math.max(1, requests)) / 1000;
    }
    return out;
  }
}

/** Samples VmRSS of every process every `intervalMs` (250 ms) until stopped. */
export class RssSampler {
  private readonly peaks = new Map<string, number>();
  /** Time series per process: [seconds since start, MB]. */
  readonly series = new Map<string, Array<[number, number]>>();
  private timer: NodeJS.Timeout | undefined;
  private startedAt = 0;

  constructor(
    private readonly processes: () => ProcessRef[],
    private readonly intervalMs = 250,
    private readonly keepSeries = false,
  ) {}

  start(): this {
    this.startedAt = performance.now();
    this.sample();
    this.timer = setInterval(() => this.sample(), this.intervalMs);
    this.timer.unref();
    return this;
  }

  stop(): Record<string, number> {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    this.sample();
    return Object.fromEntries([...this.peaks].map(([k, v]) => [k, Math.round(v * 10) / 10]));
  }

  private sample(): void {
    const t = (performance.now() - this.startedAt) / 1000;
    for (const p of this.processes()) {
      if (p.pid === undefined) continue;
      const mb = rssMb(p.pid);
      if (mb === undefined) continue;
      this.peaks.set(p.name, Math.max(this.peaks.get(p.name) ?? 0, mb));
      if (this.keepSeries) {
        let s = this.series.get(p.name);
        if (!s) this.series.set(p.name, (s = []));
        s.push([t, mb]);
      }
    }
  }
}

export interface LoadSettings {
  seconds: number;
  connections: number;
  /** Hard bound on requests per run, whatever the duration. */
  maxRequests: number;
  /** Short unmeasured run first, so the measured one sees JIT-compiled code and warm pools. */
  warmupSeconds: number;
}

/** Runs autocannon against the gateway (or a baseline) while sampling RSS. */
export async function autocannonRun(
  name: string,
  opts: autocannon.Options,
  settings: LoadSettings,
  processes: () => ProcessRef[],
): Promise<RunResult> {
  const connections = opts.connections ?? settings.connections;
  if (settings.warmupSeconds > 0) {
    await autocannon({
      ...opts,
      connections,
      duration: settings.warmupSeconds,
      maxOverallRequests: settings.maxRequests,
    });
  }
  const sampler = new RssSampler(processes).start();
  const cpu = new CpuMeter(processes).start();
  const r = await autocannon({
    ...opts,
    connections,
    duration: settings.seconds,
    maxOverallRequests: settings.maxRequests,
  });
  const peakRssMb = sampler.stop();
  const result: RunResult = {
    name,
    client: 'autocannon',
    connections,
    seconds: r.duration,
    requests: r.requests.total,
    rps: Math.round(r.requests.total / Math.max(0.001, r.duration)),
    p50: r.latency.p50,
    p90: r.latency.p90,
    p99: r.latency.p99,
    errors: r.errors + r.timeouts + r.non2xx,
    non2xx: r.non2xx,
    peakRssMb,
    cpuMsPerRequest: cpu.perRequest(r.requests.total),
    loadavg: loadavg().map((l) => Math.round(l * 100) / 100),
  };
  printRun(result);
  return result;
}

/**
 * A closed loop of `concurrency` workers calling `call` back to back for `seconds`, timing
 * each call with performance.now() (autocannon's histogram has 1 ms resolution, too coarse
 * for a "+1 ms" comparison). Used the same way for the gateway and for direct gRPC.
 */
export async function closedLoop(
  name: string,
  concurrency: number,
  seconds: number,
  maxRequests: number,
  call: (i: number) => Promise<boolean>,
  processes: () => ProcessRef[] = () => [],
  warmupSeconds = 1,
): Promise<RunResult> {
  let n = 0;
  const runFor = async (duration: number, record: number[] | undefined) => {
    let errors = 0;
    const until = performance.now() + duration * 1000;
    const worker = async () => {
      while (performance.now() < until && n < maxRequests) {
        const i = n++;
        const t = performance.now();
        let ok = false;
        try {
          ok = await call(i);
        } catch {
          ok = false;
        }
        if (ok) record?.push(performance.now() - t);
        else errors++;
      }
    };
    const started = performance.now();
    await Promise.all(Array.from({ length: concurrency }, worker));
    return { errors, elapsed: (performance.now() - started) / 1000 };
  };
  if (warmupSeconds > 0) await runFor(warmupSeconds, undefined);
  n = 0;
  const latencies: number[] = [];
  const sampler = new RssSampler(processes).start();
  const cpu = new CpuMeter(processes).start();
  const { errors, elapsed } = await runFor(seconds, latencies);
  const peakRssMb = sampler.stop();
  latencies.sort((a, b) => a - b);
  const result: RunResult = {
    name,
    client: 'loop',
    connections: concurrency,
    seconds: Math.round(elapsed * 100) / 100,
    requests: latencies.length + errors,
    rps: Math.round(latencies.length / elapsed),
    p50: round2(percentile(latencies, 0.5)),
    p90: round2(percentile(latencies, 0.9)),
    p99: round2(percentile(latencies, 0.99)),
    errors,
    non2xx: 0,
    peakRssMb,
    cpuMsPerRequest: cpu.perRequest(latencies.length + errors),
    loadavg: loadavg().map((l) => Math.round(l * 100) / 100),
  };
  printRun(result);
  return result;
}

/**
 * An open loop: requests start on a fixed schedule (`rate` per second, evenly spaced) whatever
 * the ones before them are doing, as independent clients would send them, for `seconds`.
 * This is "moderate load": the caller picks a rate well below what the path sustains, so the
 * latencies are the path's own cost plus the queueing that rate causes, not the queue a
 * closed loop with no think time builds on a saturated machine. Each call is timed from when
 * it was actually started (performance.now()); the scheduler fires every millisecond, so a
 * start is at most ≈ 1 ms late, the same for every path compared.
 */
export async function openLoop(
  name: string,
  rate: number,
  seconds: number,
  maxRequests: number,
  call: (i: number) => Promise<boolean>,
  processes: () => ProcessRef[] = () => [],
  warmupSeconds = 1,
): Promise<RunResult> {
  const runFor = async (duration: number, record: number[] | undefined) => {
    let errors = 0;
    let inFlight = 0;
    let peakInFlight = 0;
    let sent = 0;
    const total = Math.min(maxRequests, Math.round(rate * duration));
    const pending: Promise<void>[] = [];
    const started = performance.now();
    const one = async (i: number) => {
      inFlight++;
      peakInFlight = Math.max(peakInFlight, inFlight);
      const t = performance.now();
      let ok = false;
      try {
        ok = await call(i);
      } catch {
        ok = false;
      }
      inFlight--;
      if (ok) record?.push(performance.now() - t);
      else errors++;
    };
    while (sent < total) {
      const due = Math.min(total, Math.floor(((performance.now() - started) / 1000) * rate) + 1);
      while (sent < due) pending.push(one(sent++));
      await sleep(1);
    }
    await Promise.all(pending);
    return { errors, elapsed: (performance.now() - started) / 1000, peakInFlight };
  };
  if (warmupSeconds > 0) await runFor(warmupSeconds, undefined);
  const latencies: number[] = [];
  const sampler = new RssSampler(processes).start();
  const cpu = new CpuMeter(processes).start();
  const { errors, elapsed, peakInFlight } = await runFor(seconds, latencies);
  const peakRssMb = sampler.stop();
  latencies.sort((a, b) => a - b);
  const result: RunResult = {
    name,
    client: 'open',
    targetRate: rate,
    connections: peakInFlight,
    seconds: Math.round(elapsed * 100) / 100,
    requests: latencies.length + errors,
    rps: Math.round(latencies.length / elapsed),
    p50: round2(percentile(latencies, 0.5)),
    p90: round2(percentile(latencies, 0.9)),
    p99: round2(percentile(latencies, 0.99)),
    errors,
    non2xx: 0,
    peakRssMb,
    cpuMsPerRequest: cpu.perRequest(latencies.length + errors),
    loadavg: loadavg().map((l) => Math.round(l * 100) / 100),
  };
  printRun(result);
  return result;
}

/** Organization settings no benchmark run reaches (rate and deflection limits). */
export const UNLIMITED = {
  rate_limit_per_key_per_min: 1_000_000,
  rate_limit_per_org_per_min: 10_000_000,
  deflection_monthly_limit: 2_000_000_000,
};

/** The median (the lower middle value for an even count), NaN for none. */
export function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s.length === 0 ? NaN : s[Math.floor((s.length - 1) / 2)]!;
}

export function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))]!;
}

const round2 = (x: number) => Math.round(x * 100) / 100;

export function printRun(r: RunResult): void {
  const ms = (x: number) => String(x).padStart(7);
  console.log(
    `  ${r.name.padEnd(40)} ${String(r.rps).padStart(6)} req/s  p50 ${ms(r.p50)}  p90 ${ms(r.p90)}  p99 ${ms(r.p99)} ms  errors ${r.errors}  (${r.requests} req, ${r.client === 'open' ? `${r.targetRate}/s open loop, ≤ ${r.connections} in flight` : `${r.connections} conn, ${r.client}`}; load ${r.loadavg.join(' ')})`,
  );
  const cpu = Object.entries(r.cpuMsPerRequest)
    .map(([name, ms]) => `${name} ${ms}`)
    .join(', ');
  if (cpu) console.log(`  ${''.padEnd(40)} CPU ms/request: ${cpu}`);
}

/** A keep-alive HTTP GET/POST client for closed loops: resolves true on a 2xx answer. */
export function httpCaller(
  baseUrl: string,
  concurrency: number,
): {
  request(
    method: string,
    path: string,
    headers: Record<string, string>,
    body?: string,
  ): Promise<boolean>;
  close(): void;
} {
  const url = new URL(baseUrl);
  const agent = new http.Agent({ keepAlive: true, maxSockets: concurrency });
  return {
    request(method, path, headers, body) {
      return new Promise((resolve, reject) => {
        const req = http.request(
          { host: url.hostname, port: url.port, method, path, headers, agent },
          (res) => {
            res.resume();
            res.on('end', () =>
              resolve((res.statusCode ?? 0) >= 200 && (res.statusCode ?? 0) < 300),
            );
            res.on('error', reject);
          },
        );
        req.on('error', reject);
        req.end(body);
      });
    },
    close: () => agent.destroy(),
  };
}

/**
 * Waits until the given processes are (nearly) idle: less than `maxCpu` of one core each over
 * one second, twice in a row; gives up after `timeoutMs`. Used after bursts of creates, whose
 * events keep the triage pipeline and the digest consumer busy for a while.
 */
export async function waitIdle(
  processes: ProcessRef[],
  timeoutMs: number,
  maxCpu = 0.05,
): Promise<number> {
  const started = Date.now();
  let quiet = 0;
  while (Date.now() - started < timeoutMs && quiet < 2) {
    const before = processes.map((p) => (p.pid ? (cpuTicks(p.pid) ?? 0) : 0));
    await sleep(1000);
    const after = processes.map((p) => (p.pid ? (cpuTicks(p.pid) ?? 0) : 0));
    const busiest = Math.max(0, ...after.map((a, i) => (a - before[i]!) / 100));
    quiet = busiest < maxCpu ? quiet + 1 : 0;
  }
  return (Date.now() - started) / 1000;
}
