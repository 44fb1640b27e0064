import { counter } from '@support-agent/shared';

/**
 * Events refused because they do not match the contract: by the publisher (never sent) or by
 * a consumer (terminated, never redelivered). `client` is `publisher` or the consumer's name.
 */
export const invalidEvents = () =>
  counter(
    'ticket_events_invalid_total',
    'Ticket events that failed validation against the contract: not published (client="publisher") or terminated by a consumer (client=its durable name).',
    ['client'],
  );
