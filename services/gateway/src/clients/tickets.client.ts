import { callUnary, createGrpcClient } from '@support-agent/shared';
import { tickets } from '@support-agent/proto';

/** Typed calls to the tickets service; every call has a deadline and carries the request id. */
export class TicketsClient {
  private readonly client: tickets.TicketsServiceClient;

  constructor(
    readonly address: string,
    private readonly deadlineMs: number,
  ) {
    this.client = createGrpcClient(tickets.TicketsServiceClient, address);
  }

  createTicket(
    request: tickets.CreateTicketRequest,
    requestId?: string,
  ): Promise<tickets.CreateTicketResponse> {
    return callUnary(this.client.createTicket.bind(this.client), request, this.settings(requestId));
  }

  listTickets(
    request: tickets.ListTicketsRequest,
    requestId?: string,
  ): Promise<tickets.ListTicketsResponse> {
    return callUnary(this.client.listTickets.bind(this.client), request, this.settings(requestId));
  }

  updateTicketStatus(
    request: tickets.UpdateTicketStatusRequest,
    requestId?: string,
  ): Promise<tickets.UpdateTicketStatusResponse> {
    return callUnary(
      this.client.updateTicketStatus.bind(this.client),
      request,
      this.settings(requestId),
    );
  }

  close(): void {
    this.client.close();
  }

  private settings(requestId: string | undefined) {
    return { timeoutMs: this.deadlineMs, ...(requestId ? { requestId } : {}) };
  }
}
