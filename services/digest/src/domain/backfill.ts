import type { Logger } from '@support-agent/shared';
import type { TicketAggregate } from './aggregate.js';
import { parseTicketEvent } from './events.js';
import type { AggregateStore } from './ports.js';

export interface ReplayReport {
  applied: number;
  duplicates: number;
  ignored: number;
  malformed: number;
}

/**
 * Rebuilds the aggregates from scratch by replaying every ticket event in order
 * through the same exactly-once path the live consumer uses; processed ids are
 * forgotten first, so the result equals what the live consumer built. Safe with
 * a live consumer running: an event applied by either is skipped by the other.
 */
export async function rebuildFromEvents(
  store: AggregateStore,
  events: AsyncIterable<string>,
  logger: Logger,
): Promise<ReplayReport> {
  await store.resetAggregates({ forgetProcessedEvents: true });
  const report: ReplayReport = { applied: 0, duplicates: 0, ignored: 0, malformed: 0 };
  for await (const text of events) {
    const parsed = parseTicketEvent(text);
    if (parsed.kind === 'ignored') report.ignored++;
    else if (parsed.kind === 'malformed') {
      report.malformed++;
      logger.warn({ reason: parsed.reason }, 'skipping a malformed event');
    } else if ((await store.applyEvent(parsed.event)) === 'applied') report.applied++;
    else report.duplicates++;
    const seen = report.applied + report.duplicates + report.ignored + report.malformed;
    if (seen % 10_000 === 0) logger.info({ ...report }, 'backfill progress');
  }
  return report;
}

/**
 * Rebuilds the aggregates from ticket snapshots (the tickets table). Processed
 * event ids are kept, so the live consumer neither re-counts events it applied
 * before nor counts a ticket twice (a ticket counts once, whatever the source).
 */
export async function rebuildFromSnapshots(
  store: AggregateStore,
  tickets: AsyncIterable<TicketAggregate>,
  logger: Logger,
): Promise<{ tickets: number; counted: number }> {
  await store.resetAggregates({ forgetProcessedEvents: false });
  let n = 0;
  let counted = 0;
  for await (const t of tickets) {
    if (await store.applySnapshot(t)) counted++;
    if (++n % 10_000 === 0) logger.info({ tickets: n }, 'backfill progress');
  }
  return { tickets: n, counted };
}
