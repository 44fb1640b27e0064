import type { Logger } from '@support-agent/shared';
import { type DeliveryHandler, type TicketEventSource } from '@support-agent/events';
import { recordCorrection, type OrgTriageDeps } from '../../domain/org-triage/org-triage.js';

const RETRY_MS = 5_000;

/**
 * A person's category for a ticket (tickets.category_changed) joins the organization's
 * training set; acknowledged once recorded (a redelivery is recognised by its event id).
 */
export function createLabelsHandler(deps: OrgTriageDeps, logger: Logger): DeliveryHandler {
  return async ({ event }) => {
    if (event.type !== 'tickets.category_changed') return { kind: 'ack' };
    try {
      await recordCorrection(deps, {
        orgId: event.org_id,
        ticketId: event.ticket_number,
        eventId: event.id,
        text: event.data.content,
        label: event.data.to,
      });
      return { kind: 'ack' };
    } catch (err) {
      logger.warn(
        { err: (err as Error).message, eventId: event.id },
        'correction not recorded; will retry',
      );
      return { kind: 'retry', delayMs: RETRY_MS };
    }
  };
}

/** The durable consumer answers-labels feeding people's corrections to the training sets. */
export class LabelsConsumer {
  constructor(
    private readonly source: TicketEventSource,
    private readonly deps: OrgTriageDeps,
    private readonly logger: Logger,
  ) {}

  start(): void {
    this.source.start(createLabelsHandler(this.deps, this.logger));
  }

  stop(): Promise<void> {
    return this.source.stop();
  }
}
