import type { tickets } from '@support-agent/proto';
import {
  batchRequestId,
  CallBatcher,
  createTicketsClient,
  DEFAULT_DEADLINE_MS,
  fromBatchItemError,
  traceHeaders,
  type ServiceClientOptions,
} from '@support-agent/shared';
import type { TicketsUpstream } from '../../domain/ports.js';

interface PendingCreate {
  request: tickets.CreateTicketRequest;
  requestId: string | undefined;
  /** The caller's trace context, which a batch cannot carry in its metadata for every create. */
  traceparent: string | undefined;
}

/**
 * The tickets port: the shared TicketsClient, with the creates that reach the gateway in the
 * same turn of its event loop sent as one CreateTicketBatch call of at most `createBatch`
 * (CallBatcher), so the per-call work of grpc-js and HTTP/2 on both sides is paid once per
 * batch; a create alone, or `createBatch` 1, goes as its own CreateTicket. Each item carries
 * its request's id and traceparent, so tickets logs it and continues its trace as the single
 * call would.
 */
export function openTicketsUpstream(
  address: string,
  options: ServiceClientOptions<tickets.TicketsServiceService>,
  createBatch = 32,
): TicketsUpstream & { close(): void } {
  const client = createTicketsClient(address, options);
  const batcher = new CallBatcher<PendingCreate, tickets.CreateTicketResponse>(
    createBatch,
    ({ request, requestId }, timeoutMs) =>
      client.createTicket(request, { timeoutMs, ...(requestId ? { requestId } : {}) }),
    async (pending, timeoutMs) => {
      const { results } = await client.createTicketBatch(
        {
          tickets: pending.map((p) => p.request),
          traceparents: pending.some((p) => p.traceparent)
            ? pending.map((p) => p.traceparent ?? '')
            : [],
        },
        { timeoutMs, requestId: batchRequestId(pending.map((p) => p.requestId)) },
      );
      return results.map((r) =>
        r.errorCode === ''
          ? { ticketId: r.ticketId, duplicate: r.duplicate }
          : fromBatchItemError(r),
      );
    },
  );
  const timeoutMs = options.deadlineMs ?? DEFAULT_DEADLINE_MS;
  return {
    createTicket: (request, requestId) =>
      batcher.call({ request, requestId, traceparent: traceHeaders().traceparent }, timeoutMs),
    listTickets: client.listTickets,
    updateTicketStatus: client.updateTicketStatus,
    setTicketCategory: client.setTicketCategory,
    close: () => client.close(),
  };
}
