import { createTicketsClient, type TicketsClient } from '@support-agent/shared';
import type { TicketsPort, TriageReport } from '../domain/ports.js';

/** The TicketsPort over tickets.ApplyTriage (idempotent on the tickets side by event id). */
export class TriageReporter implements TicketsPort {
  private readonly client: TicketsClient;

  constructor(address: string, deadlineMs: number) {
    this.client = createTicketsClient(address, { deadlineMs });
  }

  async applyTriage(report: TriageReport): Promise<{ applied: boolean }> {
    const { orgId, ticketId, eventId, category, priority, aiSummary, aiAnswer, resolve } = report;
    const res = await this.client.applyTriage(
      { orgId, ticketId, eventId, category, priority, aiSummary, aiAnswer, resolve },
      eventId,
    );
    return { applied: res.applied };
  }

  close(): void {
    this.client.close();
  }
}
