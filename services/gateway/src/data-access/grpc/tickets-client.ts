import { tickets } from '@support-agent/proto';
import type { TicketsUpstream } from '../../domain/ports.js';
import { GrpcUpstream } from './grpc-upstream.js';

/** Typed calls to the tickets service; every call has a deadline and carries the request id. */
export class TicketsClient
  extends GrpcUpstream<tickets.TicketsServiceClient>
  implements TicketsUpstream
{
  constructor(address: string, deadlineMs: number) {
    super(address, deadlineMs, tickets.TicketsServiceClient);
  }

  createTicket(
    request: tickets.CreateTicketRequest,
    requestId?: string,
  ): Promise<tickets.CreateTicketResponse> {
    return this.unary(this.client.createTicket, request, requestId);
  }

  listTickets(
    request: tickets.ListTicketsRequest,
    requestId?: string,
  ): Promise<tickets.ListTicketsResponse> {
    return this.unary(this.client.listTickets, request, requestId);
  }

  updateTicketStatus(
    request: tickets.UpdateTicketStatusRequest,
    requestId?: string,
  ): Promise<tickets.UpdateTicketStatusResponse> {
    return this.unary(this.client.updateTicketStatus, request, requestId);
  }
}
