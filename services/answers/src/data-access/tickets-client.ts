import { callUnary, createGrpcClient } from '@support-agent/shared';
import { tickets } from '@support-agent/proto';
import type { TicketsPort, TriageReport } from '../domain/ports.js';

/** tickets.ApplyTriage over gRPC with a deadline; idempotent on the tickets side by event id. */
export class TicketsClient implements TicketsPort {
  private readonly client: tickets.TicketsServiceClient;

  constructor(
    address: string,
    private readonly deadlineMs: number,
  ) {
    this.client = createGrpcClient(tickets.TicketsServiceClient, address);
  }

  async applyTriage(report: TriageReport): Promise<{ applied: boolean }> {
    const res = await callUnary(
      this.client.applyTriage.bind(this.client),
      {
        orgId: report.orgId,
        ticketId: report.ticketId,
        eventId: report.eventId,
        category: report.category,
        priority: report.priority,
        aiSummary: report.aiSummary,
        aiAnswer: report.aiAnswer,
        resolve: report.resolve,
      },
      { timeoutMs: this.deadlineMs, requestId: report.eventId },
    );
    return { applied: res.applied };
  }

  close(): void {
    this.client.close();
  }
}
