import type { digest, knowledge, tickets as ticketsPb } from '@support-agent/proto';
import { AppError } from '@support-agent/shared';
import type { components } from '../../openapi/openapi.js';
import type { InputRules, StringLimits } from './api-contract.js';
import type { OrgSettings } from './model.js';
import type { Upstreams } from './ports.js';
import { LastKnown } from './last-known.js';
import {
  codePointLength,
  readEnum,
  readPattern,
  readIdempotencyKeyHeader,
  readInteger,
  readString,
  type ParamLocation,
  type StringRule,
} from './validation.js';

/** How long the FAQ waits for the digest before serving the organization's last known one. */
const FAQ_WAIT_MS = 300;

/** Response bodies of the public API, typed from the OpenAPI document (openapi/openapi.d.ts). */
export type Schemas = components['schemas'];

/** Who is calling: the authenticated key's organization and settings, and the request id. */
export interface Caller {
  orgId: string;
  settings: OrgSettings;
  requestId: string;
}

/**
 * Where the inputs come from: a query string (`limit=5`, repeats are errors) or JSON (a REST
 * body or MCP tool arguments, `"limit": 5`).
 */
export type InputSource = Extract<ParamLocation, 'query' | 'body'>;

export type Inputs = Record<string, unknown>;

export interface AgentOperationDeps extends Omit<Upstreams, 'triage'> {
  rules: InputRules;
}

/**
 * The five agent operations, shared by the REST routes and the MCP tools so both validate the
 * same way (limits from the OpenAPI document), call the same services and return identical
 * bodies. Invalid input throws AppError('invalid_request' | 'invalid_cursor', param).
 */
export class AgentOperations {
  private readonly params: Record<InputSource, ReturnType<typeof paramRules>>;
  /** Each organization's last digest, the FAQ's answer while the digest path is silent. */
  private readonly lastDigests = new LastKnown<digest.GetLatestDigestResponse>(FAQ_WAIT_MS);

  constructor(private readonly deps: AgentOperationDeps) {
    this.params = { query: paramRules(deps.rules, 'query'), body: paramRules(deps.rules, 'body') };
  }

  async searchKnowledgeBase(
    caller: Caller,
    input: Inputs,
    from: InputSource,
  ): Promise<Schemas['SearchResults']> {
    const found = await this.deps.knowledge.search(
      this.searchRequest(caller, input, from),
      caller.requestId,
    );
    return searchResultsOf(found);
  }

  /**
   * searchKnowledgeBase's body, serialized (UTF-8 JSON), for the REST route: the knowledge
   * adapter writes it from the response's bytes, so no objects are built only to be serialized.
   */
  searchKnowledgeBaseJson(caller: Caller, input: Inputs, from: InputSource): Promise<Uint8Array> {
    return this.deps.knowledge.searchResultsJson(
      this.searchRequest(caller, input, from),
      caller.requestId,
    );
  }

  private searchRequest(caller: Caller, input: Inputs, from: InputSource): knowledge.SearchRequest {
    const rules = this.params[from].search;
    const query = readString(input.query, rules.query);
    const limit = readInteger(input.limit, rules.limit);
    return { orgId: caller.orgId, query, limit };
  }

  async getFaqDigest(caller: Caller): Promise<Schemas['FaqDigest']> {
    // The summary (topics, examples, ticket ids) is most of the digest's bytes; the FAQ shows
    // only the markdown (docs/performance.md: it drove the gateway's RSS past 250 MB).
    const { digest: latest } = await this.lastDigests.get(caller.orgId, () =>
      this.deps.digest.getLatestDigest(
        { orgId: caller.orgId, withoutSummary: true },
        caller.requestId,
      ),
    );
    if (!latest) {
      return {
        message: 'No FAQ digest has been generated yet.',
        week_start: null,
        week_end: null,
        ticket_count: 0,
        content: null,
      };
    }
    return {
      message: `FAQ digest for ${latest.weekStart} to ${latest.weekEnd}`,
      week_start: latest.weekStart,
      week_end: latest.weekEnd,
      ticket_count: latest.ticketCount,
      content: latest.content,
    };
  }

  async listTickets(
    caller: Caller,
    input: Inputs,
    from: InputSource,
  ): Promise<Schemas['TicketPage']> {
    const rules = this.params[from].list;
    const status = readEnum(input.status, rules.status);
    const priority = readEnum(input.priority, rules.priority);
    const category = readPattern(input.category, rules.category);
    const limit = readInteger(input.limit, rules.limit);
    const cursor = readCursor(input.cursor, rules.cursor, this.deps.rules.listTickets.cursor);
    const page = await this.deps.tickets.listTickets(
      {
        orgId: caller.orgId,
        limit,
        ...(status ? { status } : {}),
        ...(priority ? { priority } : {}),
        ...(category ? { category } : {}),
        ...(cursor ? { cursor } : {}),
      },
      caller.requestId,
    );
    return { tickets: page.tickets.map(ticketToJson), next_cursor: page.nextCursor || null };
  }

  /**
   * @param idempotencyKeyHeader the raw `Idempotency-Key` header (REST); it wins over the body
   *   field `idempotencyKey`.
   */
  async createTicket(
    caller: Caller,
    input: Inputs,
    from: InputSource,
    idempotencyKeyHeader?: unknown,
  ): Promise<Schemas['CreateTicketResult']> {
    const rules = this.params[from].create;
    const content = readString(input.content, rules.content);
    const authorName = readString(input.authorName, rules.authorName);
    const bodyKey = readString(input.idempotencyKey, rules.idempotencyKey);
    const headerKey = readIdempotencyKeyHeader(
      idempotencyKeyHeader,
      this.deps.rules.createTicket.idempotencyKeyHeader.maxLength,
    );
    const idempotencyKey = headerKey ?? bodyKey;
    const created = await this.deps.tickets.createTicket(
      {
        orgId: caller.orgId,
        content,
        ...(authorName !== undefined ? { authorName } : {}),
        ...(idempotencyKey !== undefined ? { idempotencyKey } : {}),
      },
      caller.requestId,
    );
    return { ticket_id: created.ticketId, duplicate: created.duplicate };
  }

  async generateAnswer(
    caller: Caller,
    input: Inputs,
    from: InputSource,
  ): Promise<Schemas['Answer']> {
    const question = readString(input.question, this.params[from].answer.question);
    const { settings } = caller;
    const result = await this.deps.answers.generateAnswer(
      {
        orgId: caller.orgId,
        question,
        policy: {
          deflectionMonthlyLimit: settings.deflectionMonthlyLimit,
          highConfidenceThreshold: settings.highConfidenceThreshold,
        },
      },
      caller.requestId,
    );
    return {
      answer: result.answer,
      confidence: result.confidence,
      answered_fully: result.answeredFully,
      high_confidence: result.highConfidence,
      ...(result.sources.length > 0
        ? { sources: result.sources.map((s) => ({ question: s.question, score: s.score })) }
        : {}),
    };
  }
}

/** The public body of a search: the hits without their entry ids, in the service's order. */
export function searchResultsOf(found: knowledge.SearchResponse): Schemas['SearchResults'] {
  return {
    results: found.results.map((hit) => ({
      question: hit.question,
      answer: hit.answer,
      score: hit.score,
    })),
  };
}

/** A cursor is opaque; one too long to be ours is rejected here, the rest by the service. */
function readCursor(value: unknown, rule: StringRule, limits: StringLimits): string | undefined {
  const cursor = readString(value, rule);
  if (cursor !== undefined && codePointLength(cursor) > limits.maxLength) {
    throw new AppError('invalid_cursor', 'cursor was not produced by this service', {
      param: 'cursor',
    });
  }
  return cursor;
}

/**
 * The rule of every parameter of the operations, for one input source (query or JSON): built
 * once from the document's limits, not on every request.
 */
function paramRules(rules: InputRules, from: InputSource) {
  const at = <L extends object>(param: string, limits: L) => ({ param, in: from, ...limits });
  return {
    search: {
      query: at('query', rules.searchKnowledgeBase.query),
      limit: at('limit', rules.searchKnowledgeBase.limit),
    },
    list: {
      status: at('status', rules.listTickets.status),
      priority: at('priority', rules.listTickets.priority),
      category: at('category', rules.listTickets.category),
      limit: at('limit', rules.listTickets.limit),
      // Any length is read; one longer than ours is invalid_cursor (readCursor), not a 400.
      cursor: at('cursor', { maxLength: Number.MAX_SAFE_INTEGER }),
    },
    create: {
      content: at('content', rules.createTicket.content),
      authorName: at('authorName', rules.createTicket.authorName),
      idempotencyKey: at('idempotencyKey', rules.createTicket.idempotencyKey),
    },
    answer: { question: at('question', rules.generateAnswer.question) },
  };
}

/** The public ticket record: every key present, null for unset values. */
export function ticketToJson(t: ticketsPb.Ticket): Schemas['Ticket'] {
  return {
    id: t.id,
    content: t.content,
    // The tickets service only stores values of the document's enums.
    category: (t.category ?? null) as Schemas['Ticket']['category'],
    priority: t.priority as Schemas['TicketPriority'],
    status: t.status as Schemas['TicketStatus'],
    ai_summary: t.aiSummary ?? null,
    created_at: t.createdAt,
  };
}
