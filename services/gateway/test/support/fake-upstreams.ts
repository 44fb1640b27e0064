// Canned gRPC upstreams for gateway component tests: one server hosting the tickets,
// knowledge, answers and digest services (plus health), recording every request. The real
// services are tested in their own suites and end to end.
import { answers, digest, knowledge, tickets } from '@support-agent/proto';
import { startStubServer } from '../../../../test/support/grpc-stub.js';
import {
  AppError,
  createLogger,
  NO_BATCH_ERROR,
  toBatchItemError,
  unaryHandler,
  type GrpcServerHandle,
} from '@support-agent/shared';

export interface FakeUpstreams {
  address: string;
  calls: {
    /** Every create, whether it came alone or in a CreateTicketBatch. */
    createTicket: tickets.CreateTicketRequest[];
    createTicketBatch: tickets.CreateTicketBatchRequest[];
    listTickets: tickets.ListTicketsRequest[];
    updateTicketStatus: tickets.UpdateTicketStatusRequest[];
    /** Every search, whether it came alone or in a SearchBatch. */
    search: knowledge.SearchRequest[];
    searchBatch: knowledge.SearchBatchRequest[];
    upsertEntries: knowledge.UpsertEntriesRequest[];
    deleteEntries: knowledge.DeleteEntriesRequest[];
    countEntries: knowledge.CountEntriesRequest[];
    generateAnswer: answers.GenerateAnswerRequest[];
    setOrgPolicy: answers.SetOrgPolicyRequest[];
    getUsage: answers.GetUsageRequest[];
    getLatestDigest: digest.GetLatestDigestRequest[];
    buildDigest: digest.BuildDigestRequest[];
  };
  /** Request ids (x-request-id metadata) seen, in order. */
  requestIds: string[];
  /** Digests served per organization; absent = "no digest yet". */
  digests: Map<string, digest.Digest>;
  /** Milliseconds each call waits before answering (for drain tests). */
  delayMs: number;
  /** KB entries per organization, as UpsertEntries/DeleteEntries left them. */
  kb: Map<string, Map<string, knowledge.KbEntry>>;
  /** When set, UpsertEntries fails with it (after recording the request). */
  upsertError: AppError | undefined;
  /** Deflections used this month per organization (GetUsage). */
  deflectionsUsed: Map<string, number>;
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

/** Entries whose question is this are refused by the fake knowledge service, as if invalid. */
export const REJECTED_QUESTION = 'rejected by knowledge';
/** Ticket content the fake tickets service refuses with invalid_request (param content). */
export const REJECTED_CONTENT = 'refused by tickets';
/** A query the fake knowledge service answers with service_unavailable (retry after 3 s). */
export const UNAVAILABLE_QUERY = 'knowledge is loading';
/** A week_start the fake digest service refuses the way the real one refuses a non-Monday. */
export const NOT_A_MONDAY = '2026-11-17';
/** A week_start for which the fake digest service reports itself unavailable. */
export const DIGEST_BUSY_WEEK = '2026-11-23';

/** Port 0 (default) picks a free one; a fixed port lets a test start the upstream late. */
export async function startFakeUpstreams(options: { port?: number } = {}): Promise<FakeUpstreams> {
  const logger = createLogger('fake-upstreams', 'silent');
  const calls: FakeUpstreams['calls'] = {
    createTicket: [],
    createTicketBatch: [],
    listTickets: [],
    updateTicketStatus: [],
    search: [],
    searchBatch: [],
    upsertEntries: [],
    deleteEntries: [],
    countEntries: [],
    generateAnswer: [],
    setOrgPolicy: [],
    getUsage: [],
    getLatestDigest: [],
    buildDigest: [],
  };
  const requestIds: string[] = [];
  const idempotency = new Map<string, number>();
  let nextTicketId = 1000;
  const state: { delayMs: number; upsertError: AppError | undefined } = {
    delayMs: 0,
    upsertError: undefined,
  };
  const kb = new Map<string, Map<string, knowledge.KbEntry>>();
  const kbOf = (orgId: string) => {
    let entries = kb.get(orgId);
    if (!entries) kb.set(orgId, (entries = new Map()));
    return entries;
  };
  const deflectionsUsed = new Map<string, number>();

  function record<Req>(list: Req[]) {
    return async (req: Req, call: { metadata: { get(k: string): unknown[] } }) => {
      list.push(req);
      const id = call.metadata.get('x-request-id')[0];
      if (typeof id === 'string') requestIds.push(id);
      if (state.delayMs > 0) await new Promise((r) => setTimeout(r, state.delayMs));
    };
  }

  /** One create as the real service answers it: idempotent by (org, key); REJECTED_CONTENT fails. */
  const createOne = (req: tickets.CreateTicketRequest): tickets.CreateTicketResponse => {
    if (req.content === REJECTED_CONTENT)
      throw new AppError('invalid_request', 'content is refused', { param: 'content' });
    if (req.idempotencyKey) {
      const k = `${req.orgId}\u0000${req.idempotencyKey}`;
      const existing = idempotency.get(k);
      if (existing !== undefined) return { ticketId: existing, duplicate: true };
      const id = nextTicketId++;
      idempotency.set(k, id);
      return { ticketId: id, duplicate: false };
    }
    return { ticketId: nextTicketId++, duplicate: false };
  };

  const ticketsImpl = {
    createTicket: unaryHandler(
      logger,
      'createTicket',
      async (req: tickets.CreateTicketRequest, call) => {
        await record(calls.createTicket)(req, call);
        return createOne(req);
      },
    ),
    // Like the real service: 1..64 creates, each answered as CreateTicket would answer it, one
    // failing without failing the others; each create is recorded in calls.createTicket, and
    // the call's request ids (comma-separated, one per create) with it.
    createTicketBatch: unaryHandler(
      logger,
      'createTicketBatch',
      async (req: tickets.CreateTicketBatchRequest, call) => {
        if (req.tickets.length < 1 || req.tickets.length > 64)
          throw new AppError('invalid_request', 'tickets must hold 1 to 64 creates', {
            param: 'tickets',
          });
        await record(calls.createTicketBatch)(req, { metadata: { get: () => [] } });
        const ids = call.metadata.get('x-request-id')[0];
        if (typeof ids === 'string') requestIds.push(...ids.split(','));
        calls.createTicket.push(...req.tickets);
        return {
          results: req.tickets.map((t) => {
            try {
              return { ...createOne(t), ...NO_BATCH_ERROR };
            } catch (err) {
              return { ticketId: 0, duplicate: false, ...toBatchItemError(err) };
            }
          }),
        };
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

  /** The canned hits of one search, or the error the real service would give it. */
  const searchHits = (req: knowledge.SearchRequest): knowledge.SearchHit[] => {
    if (req.query === UNAVAILABLE_QUERY)
      throw new AppError('service_unavailable', 'the index is loading', { retryAfter: 3 });
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
    return hits.slice(0, req.limit);
  };

  const knowledgeImpl = {
    search: unaryHandler(logger, 'search', async (req: knowledge.SearchRequest, call) => {
      await record(calls.search)(req, call);
      return { results: searchHits(req) };
    }),
    // Like the real service: 1..64 searches, each answered as Search would answer it, one
    // failing without failing the others; each search is recorded in calls.search, and the
    // call's request ids (comma-separated, one per search) with it.
    searchBatch: unaryHandler(
      logger,
      'searchBatch',
      async (req: knowledge.SearchBatchRequest, call) => {
        if (req.searches.length < 1 || req.searches.length > 64)
          throw new AppError('invalid_request', 'searches must hold 1 to 64 searches', {
            param: 'searches',
          });
        await record(calls.searchBatch)(req, { metadata: { get: () => [] } });
        const ids = call.metadata.get('x-request-id')[0];
        if (typeof ids === 'string') requestIds.push(...ids.split(','));
        calls.search.push(...req.searches);
        return {
          results: req.searches.map((s) => {
            try {
              return { ...NO_BATCH_ERROR, results: searchHits(s) };
            } catch (err) {
              return { results: [], ...toBatchItemError(err) };
            }
          }),
        };
      },
    ),
    // Like the real service: idempotent by id, per-entry failures by request index, a repeated
    // id after its first occurrence fails alone.
    upsertEntries: unaryHandler(
      logger,
      'upsertEntries',
      async (req: knowledge.UpsertEntriesRequest, call) => {
        await record(calls.upsertEntries)(req, call);
        if (state.upsertError) throw state.upsertError;
        if (req.entries.length > 1000)
          throw new AppError('invalid_request', 'at most 1000 entries per call', {
            param: 'entries',
          });
        const entries = kbOf(req.orgId);
        const seen = new Set<string>();
        const result: knowledge.UpsertEntriesResponse = { inserted: 0, updated: 0, failed: [] };
        req.entries.forEach((entry, index) => {
          if (entry.question === REJECTED_QUESTION) {
            result.failed.push({ index, message: 'question was refused by the knowledge service' });
          } else if (seen.has(entry.id)) {
            result.failed.push({ index, message: `duplicate id "${entry.id}"` });
          } else {
            seen.add(entry.id);
            if (entries.has(entry.id)) result.updated++;
            else result.inserted++;
            entries.set(entry.id, entry);
          }
        });
        return result;
      },
    ),
    deleteEntries: unaryHandler(
      logger,
      'deleteEntries',
      async (req: knowledge.DeleteEntriesRequest, call) => {
        await record(calls.deleteEntries)(req, call);
        const entries = kbOf(req.orgId);
        return { deleted: req.ids.filter((id) => entries.delete(id)).length };
      },
    ),
    countEntries: unaryHandler(
      logger,
      'countEntries',
      async (req: knowledge.CountEntriesRequest, call) => {
        await record(calls.countEntries)(req, call);
        return { count: kbOf(req.orgId).size };
      },
    ),
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
        const confidence = 88;
        return {
          answer: 'Use the reset link.',
          confidence,
          answeredFully: true,
          highConfidence: confidence >= (req.policy?.highConfidenceThreshold ?? 85),
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
      probabilities: {},
      provider: 'builtin',
    })),
    getUsage: unaryHandler(logger, 'getUsage', async (req: answers.GetUsageRequest, call) => {
      await record(calls.getUsage)(req, call);
      return {
        month: '2026-11',
        deflectionsUsed: deflectionsUsed.get(req.orgId) ?? 0,
        deflectionLimit: req.deflectionMonthlyLimit,
      };
    }),
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
    buildDigest: unaryHandler(
      logger,
      'buildDigest',
      async (req: digest.BuildDigestRequest, call) => {
        await record(calls.buildDigest)(req, call);
        if (req.weekStart === NOT_A_MONDAY) {
          throw new AppError(
            'invalid_request',
            'week_start must be a Monday (ISO weeks start on Monday)',
            { param: 'week_start' },
          );
        }
        if (req.weekStart === DIGEST_BUSY_WEEK) throw new AppError('service_unavailable', 'busy');
        const weekStart = req.weekStart ?? '2026-11-09';
        const end = new Date(`${weekStart}T00:00:00Z`);
        end.setUTCDate(end.getUTCDate() + 6);
        const built: digest.Digest = {
          orgId: req.orgId,
          weekStart,
          weekEnd: end.toISOString().slice(0, 10),
          ticketCount: 3,
          content: `# FAQ digest ${weekStart}\n\n## Password resets\n\nThree tickets asked how to reset a password.\n`,
          generatedAt: '2026-11-16T06:00:00.000Z',
        };
        digests.set(req.orgId, built);
        return { digest: built };
      },
    ),
  };

  const server: GrpcServerHandle = await startStubServer(
    [
      { definition: tickets.TicketsServiceService, implementation: ticketsImpl },
      { definition: knowledge.KnowledgeServiceService, implementation: knowledgeImpl },
      { definition: answers.AnswersServiceService, implementation: answersImpl },
      { definition: digest.DigestServiceService, implementation: digestImpl },
    ],
    options.port ?? 0,
  );

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
    kb,
    get upsertError() {
      return state.upsertError;
    },
    set upsertError(err: AppError | undefined) {
      state.upsertError = err;
    },
    deflectionsUsed,
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
