// Canned gRPC upstreams for gateway component tests: one server hosting the tickets,
// knowledge, answers and digest services (plus health), recording every request. The real
// services are tested in their own suites and end to end.
import { answers, digest, knowledge, tickets } from '@support-agent/proto';
import {
  AppError,
  createLogger,
  startGrpcServer,
  unaryHandler,
  type GrpcServerHandle,
} from '@support-agent/shared';

export interface FakeUpstreams {
  address: string;
  calls: {
    createTicket: tickets.CreateTicketRequest[];
    listTickets: tickets.ListTicketsRequest[];
    updateTicketStatus: tickets.UpdateTicketStatusRequest[];
    search: knowledge.SearchRequest[];
    generateAnswer: answers.GenerateAnswerRequest[];
    setOrgPolicy: answers.SetOrgPolicyRequest[];
    getLatestDigest: digest.GetLatestDigestRequest[];
  };
  /** Request ids (x-request-id metadata) seen, in order. */
  requestIds: string[];
  /** Digests served per organization; absent = "no digest yet". */
  digests: Map<string, digest.Digest>;
  /** Milliseconds each call waits before answering (for drain tests). */
  delayMs: number;
  totalCalls(): number;
  reset(): void;
  stop(): Promise<void>;
}

export const SAMPLE_TICKET: tickets.Ticket = {
  id: 42,
  orgId: 'x',
  content: 'The export button does nothing',
  category: 'bug',
  priority: 'high',
  status: 'open',
  aiSummary: 'Export broken',
  createdAt: '2026-11-21T10:15:30.123Z',
  authorName: 'Ann',
  aiAnswer: undefined,
  updatedAt: '2026-11-21T10:15:30.123Z',
};

export async function startFakeUpstreams(): Promise<FakeUpstreams> {
  const logger = createLogger('fake-upstreams', 'silent');
  const calls: FakeUpstreams['calls'] = {
    createTicket: [],
    listTickets: [],
    updateTicketStatus: [],
    search: [],
    generateAnswer: [],
    setOrgPolicy: [],
    getLatestDigest: [],
  };
  const requestIds: string[] = [];
  const idempotency = new Map<string, number>();
  let nextTicketId = 1000;
  const state = { delayMs: 0 };

  function record<Req>(list: Req[]) {
    return async (req: Req, call: { metadata: { get(k: string): unknown[] } }) => {
      list.push(req);
      const id = call.metadata.get('x-request-id')[0];
      if (typeof id === 'string') requestIds.push(id);
      if (state.delayMs > 0) await new Promise((r) => setTimeout(r, state.delayMs));
    };
  }

  const ticketsImpl = {
    createTicket: unaryHandler(
      logger,
      'createTicket',
      async (req: tickets.CreateTicketRequest, call) => {
        await record(calls.createTicket)(req, call);
        if (req.idempotencyKey) {
          const k = `${req.orgId}\u0000${req.idempotencyKey}`;
          const existing = idempotency.get(k);
          if (existing !== undefined) return { ticketId: existing, duplicate: true };
          const id = nextTicketId++;
          idempotency.set(k, id);
          return { ticketId: id, duplicate: false };
        }
        return { ticketId: nextTicketId++, duplicate: false };
      },
    ),
    listTickets: unaryHandler(
      logger,
      'listTickets',
      async (req: tickets.ListTicketsRequest, call) => {
        await record(calls.listTickets)(req, call);
        if (req.cursor === 'forged')
          throw new AppError('invalid_cursor', 'cursor was not produced by this service', {
            param: 'cursor',
          });
        const untriaged: tickets.Ticket = {
          ...SAMPLE_TICKET,
          id: 41,
          category: undefined,
          aiSummary: undefined,
          priority: 'medium',
          createdAt: '2026-11-21T09:00:00.000Z',
        };
        const all = [
          { ...SAMPLE_TICKET, orgId: req.orgId },
          { ...untriaged, orgId: req.orgId },
        ];
        return req.cursor ? { tickets: [all[1]!] } : { tickets: [all[0]!], nextCursor: 'c1' };
      },
    ),
    getTicket: unaryHandler(logger, 'getTicket', async () => {
      throw new AppError('not_found', 'ticket not found');
    }),
    updateTicketStatus: unaryHandler(
      logger,
      'updateTicketStatus',
      async (req: tickets.UpdateTicketStatusRequest, call) => {
        await record(calls.updateTicketStatus)(req, call);
        if (req.ticketId === 404)
          throw new AppError('not_found', `ticket ${req.ticketId} not found`);
        if (req.status === 'closed')
          throw new AppError('conflict', 'cannot move a ticket from open to closed');
        return {
          ticket: { ...SAMPLE_TICKET, id: req.ticketId, orgId: req.orgId, status: req.status },
        };
      },
    ),
    applyTriage: unaryHandler(logger, 'applyTriage', async () => {
      throw new AppError('internal_error', 'not implemented in the fake');
    }),
  };

  const knowledgeImpl = {
    search: unaryHandler(logger, 'search', async (req: knowledge.SearchRequest, call) => {
      await record(calls.search)(req, call);
      const hits: knowledge.SearchHit[] = [
        {
          entryId: 'e1',
          question: 'How do I reset my password?',
          answer: 'Use the reset link.',
          score: 0.91,
        },
        {
          entryId: 'e2',
          question: 'How do I export data?',
          answer: 'Settings → Export.',
          score: 0.42,
        },
      ];
      return { results: hits.slice(0, req.limit) };
    }),
    upsertEntries: unaryHandler(logger, 'upsertEntries', async () => ({
      inserted: 0,
      updated: 0,
      failed: [],
    })),
    deleteEntries: unaryHandler(logger, 'deleteEntries', async () => ({ deleted: 0 })),
    countEntries: unaryHandler(logger, 'countEntries', async () => ({ count: 0 })),
  };

  const answersImpl = {
    generateAnswer: unaryHandler(
      logger,
      'generateAnswer',
      async (req: answers.GenerateAnswerRequest, call) => {
        await record(calls.generateAnswer)(req, call);
        if (req.question === 'over the limit') {
          throw new AppError('deflection_limit_reached', 'monthly deflection limit reached', {
            retryAfter: 3600,
          });
        }
        const confidence = 80;
        return {
          answer: 'Use the reset link.',
          confidence,
          answeredFully: true,
          highConfidence: confidence >= (req.policy?.highConfidenceThreshold ?? 75),
          sources: req.question.includes('sources')
            ? [{ entryId: 'e1', question: 'How do I reset my password?', score: 0.91 }]
            : [],
        };
      },
    ),
    setOrgPolicy: unaryHandler(
      logger,
      'setOrgPolicy',
      async (req: answers.SetOrgPolicyRequest, call) => {
        await record(calls.setOrgPolicy)(req, call);
        return {};
      },
    ),
    classifyTicket: unaryHandler(logger, 'classifyTicket', async () => ({
      category: 'general_question',
      priority: 'medium',
      summary: '',
    })),
    getUsage: unaryHandler(logger, 'getUsage', async () => ({
      month: '2026-11',
      deflectionsUsed: 0,
      deflectionLimit: 0,
    })),
  };

  const digests = new Map<string, digest.Digest>();
  const digestImpl = {
    getLatestDigest: unaryHandler(
      logger,
      'getLatestDigest',
      async (req: digest.GetLatestDigestRequest, call) => {
        await record(calls.getLatestDigest)(req, call);
        const d = digests.get(req.orgId);
        return d ? { digest: d } : {};
      },
    ),
    buildDigest: unaryHandler(logger, 'buildDigest', async () => {
      throw new AppError('internal_error', 'not implemented in the fake');
    }),
  };

  const server: GrpcServerHandle = await startGrpcServer({
    host: '127.0.0.1',
    port: 0,
    logger,
    services: [
      { definition: tickets.TicketsServiceService, implementation: ticketsImpl },
      { definition: knowledge.KnowledgeServiceService, implementation: knowledgeImpl },
      { definition: answers.AnswersServiceService, implementation: answersImpl },
      { definition: digest.DigestServiceService, implementation: digestImpl },
    ],
  });

  return {
    address: `127.0.0.1:${server.port}`,
    calls,
    requestIds,
    digests,
    get delayMs() {
      return state.delayMs;
    },
    set delayMs(ms: number) {
      state.delayMs = ms;
    },
    // Policy pushes are admin-side, not caused by agent requests.
    totalCalls: () =>
      Object.entries(calls).reduce(
        (n, [name, list]) => (name === 'setOrgPolicy' ? n : n + list.length),
        0,
      ),
    reset() {
      for (const list of Object.values(calls)) list.length = 0;
      requestIds.length = 0;
    },
    stop: () => server.stop(1_000),
  };
}
