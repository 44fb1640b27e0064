import type { ServerUnaryCall, handleUnaryCall } from '@grpc/grpc-js';
import {
  batchRequestIdsOf,
  invalidRequest,
  NO_BATCH_ERROR,
  requestIdOf,
  settleEach,
  toRfc3339,
  withBatchItemSpan,
  unaryHandler,
  type Logger,
} from '@support-agent/shared';
import type { tickets } from '@support-agent/proto';
import { applyTriage } from '../../domain/apply-triage.js';
import { createTicket } from '../../domain/create-ticket.js';
import { getTicket } from '../../domain/get-ticket.js';
import { listTickets } from '../../domain/list-tickets.js';
import type { TicketsDeps } from '../../domain/ports.js';
import type { Ticket } from '../../domain/ticket.js';
import { setTicketCategory } from '../../domain/set-category.js';
import { updateTicketStatus } from '../../domain/update-status.js';
import { ticketsMetrics } from '../../metrics.js';

/** Domain ticket → wire ticket; null fields are left unset. */
export function toProtoTicket(t: Ticket): tickets.Ticket {
  return {
    id: t.id,
    orgId: t.orgId,
    content: t.content,
    category: t.category ?? undefined,
    priority: t.priority,
    status: t.status,
    aiSummary: t.aiSummary ?? undefined,
    createdAt: toRfc3339(t.createdAt),
    authorName: t.authorName ?? undefined,
    aiAnswer: t.aiAnswer ?? undefined,
    updatedAt: toRfc3339(t.updatedAt),
  };
}

/** Most triage results one ApplyTriageBatch call takes (answers' triage sends at most its batch). */
export const APPLY_TRIAGE_BATCH_MAX = 64;
/** Most creates one CreateTicketBatch call takes (the gateway sends at most CREATE_TICKET_BATCH). */
export const CREATE_TICKET_BATCH_MAX = 64;

/**
 * The TicketsService gRPC handlers: map the wire messages to the use cases and
 * back. Each call logs with the gateway's request id and the org id.
 */
export function createTicketsHandlers(
  deps: TicketsDeps,
  logger: Logger,
): tickets.TicketsServiceServer {
  function handler<Req extends { orgId: string }, Res>(
    method: string,
    fn: (request: Req, log: Logger) => Promise<Res>,
  ): handleUnaryCall<Req, Res> {
    return (call: ServerUnaryCall<Req, Res>, callback) => {
      const log = logger.child({ requestId: requestIdOf(call), orgId: call.request.orgId, method });
      unaryHandler<Req, Res>(log, method, (request) => fn(request, log))(call, callback);
    };
  }

  return {
    createTicket: handler<tickets.CreateTicketRequest, tickets.CreateTicketResponse>(
      'CreateTicket',
      createOne,
    ),

    createTicketBatch: unaryHandler<
      tickets.CreateTicketBatchRequest,
      tickets.CreateTicketBatchResponse
    >(logger, 'CreateTicketBatch', async (req, call) => {
      if (req.tickets.length < 1 || req.tickets.length > CREATE_TICKET_BATCH_MAX)
        throw invalidRequest(`tickets must hold 1 to ${CREATE_TICKET_BATCH_MAX}`, 'tickets');
      const requestIdOfItem = batchRequestIdsOf(call, req.tickets.length);
      // Started together, the creates share tickets' transactions (shared-transactions.ts), as
      // single calls arriving in one turn do; each runs in a span of its own request's trace,
      // so its outbox row (and event) continues that trace.
      const settled = await settleEach(
        req.tickets,
        { logger, method: 'CreateTicketBatch' },
        (t, i) => {
          const log = logger.child({
            requestId: requestIdOfItem(i),
            orgId: t.orgId,
            method: 'CreateTicketBatch',
          });
          return withBatchItemSpan('CreateTicketBatch item', req.traceparents[i], () =>
            createOne(t, log),
          );
        },
      );
      return {
        results: settled.map((s) =>
          'error' in s
            ? { ticketId: 0, duplicate: false, ...s.error }
            : { ...s.value, ...NO_BATCH_ERROR },
        ),
      };
    }),

    listTickets: handler<tickets.ListTicketsRequest, tickets.ListTicketsResponse>(
      'ListTickets',
      async (req) => {
        const page = await listTickets(deps, {
          orgId: req.orgId,
          status: req.status,
          priority: req.priority,
          category: req.category,
          limit: req.limit,
          cursor: req.cursor,
        });
        return { tickets: page.tickets.map(toProtoTicket), nextCursor: page.nextCursor };
      },
    ),

    getTicket: handler<tickets.GetTicketRequest, tickets.GetTicketResponse>(
      'GetTicket',
      async (req) => {
        const ticket = await getTicket(deps, { orgId: req.orgId, ticketId: req.ticketId });
        return { ticket: toProtoTicket(ticket) };
      },
    ),

    updateTicketStatus: handler<
      tickets.UpdateTicketStatusRequest,
      tickets.UpdateTicketStatusResponse
    >('UpdateTicketStatus', async (req, log) => {
      const ticket = await updateTicketStatus(deps, {
        orgId: req.orgId,
        ticketId: req.ticketId,
        status: req.status,
      });
      log.info({ ticketId: ticket.id, status: ticket.status }, 'ticket status set');
      return { ticket: toProtoTicket(ticket) };
    }),

    setTicketCategory: handler<tickets.SetTicketCategoryRequest, tickets.SetTicketCategoryResponse>(
      'SetTicketCategory',
      async (req, log) => {
        const ticket = await setTicketCategory(deps, {
          orgId: req.orgId,
          ticketId: req.ticketId,
          category: req.category,
        });
        log.info({ ticketId: ticket.id, category: ticket.category }, 'ticket category set');
        return { ticket: toProtoTicket(ticket) };
      },
    ),

    applyTriage: handler<tickets.ApplyTriageRequest, tickets.ApplyTriageResponse>(
      'ApplyTriage',
      async (req, log) => {
        const result = await applyOne(req, log);
        return { ticket: toProtoTicket(result.ticket), applied: result.applied };
      },
    ),

    applyTriageBatch: unaryHandler<
      tickets.ApplyTriageBatchRequest,
      tickets.ApplyTriageBatchResponse
    >(logger, 'ApplyTriageBatch', async (req) => {
      if (req.results.length < 1 || req.results.length > APPLY_TRIAGE_BATCH_MAX)
        throw invalidRequest(`results must hold 1 to ${APPLY_TRIAGE_BATCH_MAX}`, 'results');
      // Started together, the updates share tickets' transactions (batched-updates.ts). A repeat
      // of an event id earlier in the batch starts once that one has settled, so the first is
      // the one applied, as in a sequence of ApplyTriage calls (started together, either could
      // reach a transaction first).
      const before = new Map<string, Promise<unknown>>();
      const settled = await settleEach(req.results, { logger, method: 'ApplyTriageBatch' }, (r) => {
        const apply = () =>
          applyOne(
            r,
            logger.child({ eventId: r.eventId, orgId: r.orgId, method: 'ApplyTriageBatch' }),
          );
        const earlier = before.get(r.eventId);
        const applied = earlier ? earlier.then(apply, apply) : apply();
        before.set(
          r.eventId,
          applied.catch(() => undefined),
        );
        return applied;
      });
      return {
        results: settled.map((s) =>
          'error' in s
            ? { applied: false, ...s.error }
            : { applied: s.value.applied, ...NO_BATCH_ERROR },
        ),
      };
    }),
  };

  async function createOne(
    req: tickets.CreateTicketRequest,
    log: Logger,
  ): Promise<tickets.CreateTicketResponse> {
    const result = await createTicket(
      deps,
      {
        orgId: req.orgId,
        content: req.content,
        authorName: req.authorName,
        idempotencyKey: req.idempotencyKey,
      },
      log,
    );
    if (result.duplicate) ticketsMetrics.idempotentReplays.inc();
    return { ticketId: result.ticketId, duplicate: result.duplicate };
  }

  async function applyOne(req: tickets.ApplyTriageRequest, log: Logger) {
    const result = await applyTriage(deps, {
      orgId: req.orgId,
      ticketId: req.ticketId,
      eventId: req.eventId,
      category: req.category,
      priority: req.priority,
      aiSummary: req.aiSummary,
      aiAnswer: req.aiAnswer,
      resolve: req.resolve,
    });
    log.info(
      { ticketId: result.ticket.id, applied: result.applied, status: result.ticket.status },
      'triage applied',
    );
    return result;
  }
}
