import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Logger } from '@support-agent/shared';

type Labels = Record<string, string>;

interface Series {
  help: string;
  type: 'counter' | 'gauge';
  values: Map<string, number>;
}

/**
 * The service's Prometheus metrics, kept by hand in the text exposition format
 * (version 0.0.4): a handful of counters and gauges, no client library needed.
 */
export class DigestMetrics {
  private readonly series = new Map<string, Series>();

  constructor() {
    this.define(
      'digest_consumer_pending',
      'gauge',
      'Ticket events not yet applied: consumer num_pending plus num_ack_pending (-1 when unknown).',
    );
    this.define(
      'digest_events_processed_total',
      'counter',
      'Ticket events applied to the aggregates.',
    );
    this.define(
      'digest_events_redelivered_total',
      'counter',
      'Deliveries of ticket events that had been delivered before.',
    );
    this.define(
      'digest_events_duplicate_total',
      'counter',
      'Ticket events skipped because their id had been applied already.',
    );
    this.define(
      'digest_events_dropped_total',
      'counter',
      'Malformed ticket events dropped (terminated).',
    );
    this.define(
      'digest_events_failed_total',
      'counter',
      'Attempts to apply a ticket event that failed and will be retried.',
    );
    this.define(
      'digest_builds_total',
      'counter',
      'Digests built, by trigger (manual = BuildDigest, schedule = weekly run).',
    );
    this.define('digest_build_failures_total', 'counter', 'Digest builds that failed, by trigger.');
    this.define('digest_schedule_runs_total', 'counter', 'Weekly runs this replica completed.');
    this.set('digest_consumer_pending', -1);
  }

  inc(name: string, labels: Labels = {}, by = 1): void {
    const s = this.get(name);
    const key = labelKey(labels);
    s.values.set(key, (s.values.get(key) ?? 0) + by);
  }

  set(name: string, value: number, labels: Labels = {}): void {
    this.get(name).values.set(labelKey(labels), value);
  }

  value(name: string, labels: Labels = {}): number {
    return this.get(name).values.get(labelKey(labels)) ?? 0;
  }

  /** The exposition text. */
  render(): string {
    const out: string[] = [];
    for (const [name, s] of this.series) {
      out.push(`# HELP ${name} ${s.help}`, `# TYPE ${name} ${s.type}`);
      if (s.values.size === 0 && s.type === 'counter') out.push(`${name} 0`);
      for (const [key, v] of s.values) out.push(`${name}${key} ${Number.isFinite(v) ? v : 0}`);
    }
    return out.join('\n') + '\n';
  }

  private define(name: string, type: Series['type'], help: string): void {
    this.series.set(name, { help, type, values: new Map() });
  }

  private get(name: string): Series {
    const s = this.series.get(name);
    if (!s) throw new Error(`unknown metric ${name}`);
    return s;
  }
}

function labelKey(labels: Labels): string {
  const entries = Object.entries(labels).sort(([a], [b]) => (a < b ? -1 : 1));
  if (entries.length === 0) return '';
  const escape = (v: string) => v.replace(/\\/g, '\\\\').replace(/\n/g, '\\n').replace(/"/g, '\\"');
  return `{${entries.map(([k, v]) => `${k}="${escape(v)}"`).join(',')}}`;
}

export interface MetricsEndpoint {
  port: number;
  close(): Promise<void>;
}

/** Serves GET /metrics on host:port (port 0 in tests picks a free one). */
export async function startMetricsEndpoint(
  metrics: DigestMetrics,
  host: string,
  port: number,
  logger: Logger,
): Promise<MetricsEndpoint> {
  const server: Server = createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0];
    if (path !== '/metrics') {
      res.writeHead(404, { 'Content-Type': 'text/plain' }).end('not found\n');
      return;
    }
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      res
        .writeHead(405, { Allow: 'GET, HEAD', 'Content-Type': 'text/plain' })
        .end('method not allowed\n');
      return;
    }
    res.writeHead(200, { 'Content-Type': 'text/plain; version=0.0.4; charset=utf-8' });
    res.end(req.method === 'HEAD' ? undefined : metrics.render());
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve());
  });
  const bound = (server.address() as AddressInfo).port;
  logger.info({ address: `${host}:${bound}` }, 'metrics listening');
  return {
    port: bound,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
