// Helpers of the replica suite (test/reliability/replicas.test.ts): which replica served how many
// calls, and a client of a rate-limited key that records every answer, so the suite can check
// that both gateways count one shared quota.
import { connect } from 'nats';
import { STREAM_NAME } from '@support-agent/events';
import { httpRequest } from './http-raw.js';
import { scrapeMetrics } from './pipeline.js';
import type { Stack } from './stack.js';

/** gRPC calls a process has served since it started (health checks left out); 0 when down. */
export async function servedCalls(stack: Stack, processName: string): Promise<number> {
  let metrics: Map<string, number>;
  try {
    metrics = await scrapeMetrics(stack.metricsUrl(processName));
  } catch {
    return 0;
  }
  let n = 0;
  for (const [sample, value] of metrics) {
    if (sample.startsWith('grpc_server_requests_total{') && !sample.includes('grpc.health.v1')) {
      n += value;
    }
  }
  return n;
}

/**
 * What a durable consumer shared by several replicas delivered: messages delivered more than
 * once (those in the hands of a replica that died, redelivered after the ack wait) and
 * deliveries in all.
 */
export async function consumerDeliveries(
  natsUrl: string,
  consumer: string,
): Promise<{ redelivered: number; deliveries: number }> {
  const nc = await connect({ servers: natsUrl, timeout: 2_000 });
  try {
    const info = await (await nc.jetstreamManager()).consumers.info(STREAM_NAME, consumer);
    return { redelivered: info.num_redelivered, deliveries: info.delivered.consumer_seq };
  } finally {
    await nc.close();
  }
}

/** The most events of `times` (ms) inside any window of `windowMs`. */
export function maxInWindow(times: readonly number[], windowMs: number): number {
  const sorted = [...times].sort((a, b) => a - b);
  let best = 0;
  let start = 0;
  for (let end = 0; end < sorted.length; end++) {
    while (sorted[end]! - sorted[start]! >= windowMs) start++;
    best = Math.max(best, end - start + 1);
  }
  return best;
}

/** One allowed request of the limited key: when it came back and what its RateLimit header said. */
interface Allowed {
  at: number;
  /** Requests left in the last 60 s (`r=`). */
  remaining: number;
}

/**
 * Searches with one key, through every gateway in turn, every `intervalMs`, until stop().
 * Each 200 and each 429 is recorded.
 */
export class LimitedKeyClient {
  readonly allowed: Allowed[] = [];
  refused = 0;
  other = 0;
  private running = false;
  private loop: Promise<void> | undefined;

  constructor(
    private readonly urls: () => string[],
    private readonly key: string,
    private readonly intervalMs: number,
  ) {}

  start(): void {
    this.running = true;
    this.loop = this.run();
  }

  async stop(): Promise<void> {
    this.running = false;
    await this.loop;
  }

  private async run(): Promise<void> {
    for (let i = 0; this.running; i++) {
      const urls = this.urls();
      const o = await httpRequest(
        urls[i % urls.length]!,
        'GET',
        '/api/v1/agent/kb/search?query=invoices&limit=1',
        { headers: { authorization: `Bearer ${this.key}` }, timeoutMs: 5_000 },
      );
      if (o.kind === 'response' && o.status === 200) {
        const m = /;r=(\d+)/.exec(String(o.headers.ratelimit ?? ''));
        this.allowed.push({ at: Date.now(), remaining: Number(m?.[1] ?? -1) });
      } else if (o.kind === 'response' && o.status === 429) this.refused++;
      else this.other++;
      await new Promise((r) => setTimeout(r, this.intervalMs));
    }
  }
}
