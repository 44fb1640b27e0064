import { counter, gauge } from '@support-agent/shared';

/** The tickets service's own Prometheus metrics (the gRPC RED metrics come from shared). */
export const ticketsMetrics = {
  outboxBacklog: gauge(
    'outbox_backlog',
    'Outbox events not yet published to the broker (refreshed by the relay).',
  ),
  outboxPublished: counter(
    'outbox_published_total',
    'Outbox events this process published to the broker.',
  ),
  idempotentReplays: counter(
    'idempotent_replays_total',
    'CreateTicket calls answered with the ticket that already held the idempotency key.',
  ),
};
