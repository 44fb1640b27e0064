import {
  CallBatcher,
  createTicketsClient,
  fromBatchItemError,
  type TicketsClient,
} from '@support-agent/shared';
import type { tickets } from '@support-agent/proto';
import type { TicketsPort, TriageReport } from '../domain/ports.js';

/**
 * The TicketsPort over tickets.ApplyTriage (idempotent on the tickets side by event id).
 * Results reported together (triage's batch of tickets) leave as one ApplyTriageBatch call of
 * at most `batchMax` results (CallBatcher); 1 sends each as an ApplyTriage.
 */
export class TriageReporter implements TicketsPort {
  private readonly client: TicketsClient;
  private readonly batcher: CallBatcher<tickets.ApplyTriageRequest, { applied: boolean }>;

  constructor(
    address: string,
    private readonly deadlineMs: number,
    batchMax = 1,
  ) {
    const client = createTicketsClient(address, { deadlineMs });
    this.client = client;
    this.batcher = new CallBatcher(
      batchMax,
      async (request, timeoutMs) => {
        // The event id is the call's request id, as in tickets' logs.
        const res = await client.applyTriage(request, { timeoutMs, requestId: request.eventId });
        return { applied: res.applied };
      },
      async (results, timeoutMs) =>
        (await client.applyTriageBatch({ results }, { timeoutMs })).results.map((r) =>
          r.errorCode === '' ? { applied: r.applied } : fromBatchItemError(r),
        ),
    );
  }

  applyTriage(report: TriageReport): Promise<{ applied: boolean }> {
    const { orgId, ticketId, eventId, category, priority, aiSummary, aiAnswer, resolve } = report;
    return this.batcher.call(
      { orgId, ticketId, eventId, category, priority, aiSummary, aiAnswer, resolve },
      this.deadlineMs,
    );
  }

  close(): void {
    this.client.close();
  }
}
