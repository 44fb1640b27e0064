import { counter, gauge } from '@support-agent/shared';
import type { DeflectionLedger } from './domain/ports.js';

/**
 * The answers service's own Prometheus metrics (the gRPC RED metrics come from shared).
 * No per-organization labels: usage per org is GetUsage's job, not Prometheus's.
 */
export const answersMetrics = {
  deflectionsCommitted: counter(
    'deflections_committed_total',
    'High-confidence answers counted against an organization’s monthly deflection limit.',
  ),
  deflectionsReleased: counter(
    'deflections_released_total',
    'Reserved deflection slots given back (low confidence, failure, or expired reservation).',
  ),
  deflectionLimitRejections: counter(
    'deflection_limit_rejections_total',
    'Answers refused because the organization’s monthly deflection limit was reached.',
  ),
  triageEvents: counter(
    'triage_events_total',
    'tickets.created events handled by the triage consumer, by outcome (resolved, low_confidence, limit_reached, unavailable, retried, dropped).',
    ['outcome'],
  ),
  triageConsumerPending: gauge(
    'triage_consumer_pending',
    'Ticket events not yet triaged: consumer num_pending + num_ack_pending (embedded: unread bytes of the event file; -1 when unknown).',
  ),
};
answersMetrics.triageConsumerPending.set(-1);

/** The ledger, counting what happens to deflection slots (commit, release, limit). */
export function meteredLedger<L extends DeflectionLedger>(ledger: L): L {
  const m = answersMetrics;
  return new Proxy(ledger, {
    get(target, prop, receiver) {
      const value: unknown = Reflect.get(target, prop, receiver);
      if (typeof value !== 'function') return value;
      switch (prop) {
        case 'reserve':
          return async (...args: Parameters<DeflectionLedger['reserve']>) => {
            const outcome = await target.reserve(...args);
            if (outcome.kind === 'limit_reached') m.deflectionLimitRejections.inc();
            return outcome;
          };
        case 'commit':
          return async (...args: Parameters<DeflectionLedger['commit']>) => {
            const outcome = await target.commit(...args);
            if (outcome === 'committed') m.deflectionsCommitted.inc();
            else if (outcome === 'limit_reached') m.deflectionLimitRejections.inc();
            return outcome;
          };
        case 'release':
          return async (...args: Parameters<DeflectionLedger['release']>) => {
            await target.release(...args);
            m.deflectionsReleased.inc();
          };
        case 'releaseExpired':
          return async (...args: Parameters<DeflectionLedger['releaseExpired']>) => {
            const released = await target.releaseExpired(...args);
            if (released > 0) m.deflectionsReleased.inc(released);
            return released;
          };
        default:
          return (value as (...a: unknown[]) => unknown).bind(target);
      }
    },
  });
}
