import { Registry, counter, gauge, type Counter, type Gauge } from '@support-agent/shared';

type Labels = Record<string, string>;

/**
 * The service's own Prometheus metrics, in a registry per service instance (tests run several
 * in one process and read each one's counts), served next to the process-wide registry of
 * shared (gRPC RED metrics, process metrics).
 */
export class DigestMetrics {
  readonly registry = new Registry();
  private readonly metrics = new Map<string, Counter<string> | Gauge<string>>();

  constructor() {
    this.gauge(
      'digest_consumer_pending',
      'Ticket events not yet applied: consumer num_pending plus num_ack_pending (-1 when unknown).',
    );
    this.counter('digest_events_processed_total', 'Ticket events applied to the aggregates.');
    this.counter(
      'digest_events_redelivered_total',
      'Deliveries of ticket events that had been delivered before.',
    );
    this.counter(
      'digest_events_duplicate_total',
      'Ticket events skipped because their id had been applied already.',
    );
    this.counter('digest_events_dropped_total', 'Malformed ticket events dropped (terminated).');
    this.counter(
      'digest_events_failed_total',
      'Attempts to apply a ticket event that failed and will be retried.',
    );
    this.counter(
      'digest_builds_total',
      'Digests built, by trigger (manual = BuildDigest, schedule = weekly run).',
      ['trigger'],
    );
    this.counter('digest_build_failures_total', 'Digest builds that failed, by trigger.', [
      'trigger',
    ]);
    this.counter('digest_schedule_runs_total', 'Weekly runs this replica completed.');
    this.set('digest_consumer_pending', -1);
    for (const trigger of ['manual', 'schedule']) {
      this.inc('digest_builds_total', { trigger }, 0);
      this.inc('digest_build_failures_total', { trigger }, 0);
    }
  }

  inc(name: string, labels: Labels = {}, by = 1): void {
    (this.get(name) as Counter<string>).inc(labels, by);
  }

  set(name: string, value: number, labels: Labels = {}): void {
    (this.get(name) as Gauge<string>).set(labels, value);
  }

  private counter(name: string, help: string, labelNames: string[] = []): void {
    this.metrics.set(name, counter(name, help, labelNames, this.registry));
  }

  private gauge(name: string, help: string): void {
    this.metrics.set(name, gauge(name, help, [], this.registry));
  }

  private get(name: string): Counter<string> | Gauge<string> {
    const m = this.metrics.get(name);
    if (!m) throw new Error(`unknown metric ${name}`);
    return m;
  }
}
