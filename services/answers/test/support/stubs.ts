// In-test stand-ins for the knowledge and tickets services: real gRPC servers
// (shared startGrpcServer, generated service definitions) with scriptable behaviour.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import {
  AppError,
  createLogger,
  NO_BATCH_ERROR,
  toBatchItemError,
  unaryHandler,
  type GrpcServerHandle,
} from '@support-agent/shared';
import { knowledge, tickets } from '@support-agent/proto';
import { startStubServer } from '../../../../test/support/grpc-stub.js';
import { termSet } from '../../src/domain/text.js';

const logger = createLogger('test-stub', 'silent');

export interface StubEntry {
  id: string;
  question: string;
  answer: string;
}

const unimplemented = async (): Promise<never> => {
  throw new AppError('internal_error', 'not implemented by the stub');
};

/**
 * knowledge.Search (and SearchBatch, each search as Search; down fails the whole call) over a fixed KB per org. Score: shared question terms over the
 * larger term set of query and entry question (1 = same question, 0 = unrelated).
 */
export class KnowledgeStub {
  readonly kb = new Map<string, StubEntry[]>();
  down = false;
  delayMs = 0;
  searches = 0;
  /** Queries whose search fails with the given error (in Search and in SearchBatch alike). */
  readonly failing = new Map<string, AppError>();
  /** The size of each SearchBatch call received. */
  readonly batches: number[] = [];
  private server: GrpcServerHandle | undefined;

  async start(): Promise<string> {
    this.server = await startStubServer([
      {
        definition: knowledge.KnowledgeServiceService,
        implementation: {
          search: unaryHandler(logger, 'Search', (req: knowledge.SearchRequest) =>
            this.search(req),
          ),
          searchBatch: unaryHandler(
            logger,
            'SearchBatch',
            async (req: knowledge.SearchBatchRequest) => {
              this.batches.push(req.searches.length);
              if (this.down) throw new AppError('service_unavailable', 'knowledge is down (stub)');
              const answered = await Promise.allSettled(req.searches.map((s) => this.search(s)));
              return {
                results: answered.map((r) =>
                  r.status === 'fulfilled'
                    ? { ...r.value, ...NO_BATCH_ERROR }
                    : { results: [], ...toBatchItemError(r.reason) },
                ),
              };
            },
          ),
          upsertEntries: unaryHandler(logger, 'UpsertEntries', unimplemented),
          deleteEntries: unaryHandler(logger, 'DeleteEntries', unimplemented),
          countEntries: unaryHandler(logger, 'CountEntries', unimplemented),
        },
      },
    ]);
    return `127.0.0.1:${this.server.port}`;
  }

  async stop(): Promise<void> {
    await this.server?.stop(0);
  }

  private async search(req: knowledge.SearchRequest): Promise<knowledge.SearchResponse> {
    this.searches++;
    if (this.delayMs > 0) await new Promise((r) => setTimeout(r, this.delayMs));
    if (this.down) throw new AppError('service_unavailable', 'knowledge is down (stub)');
    const failure = this.failing.get(req.query);
    if (failure) throw failure;
    const q = termSet(req.query);
    const results = (this.kb.get(req.orgId) ?? [])
      .map((e) => {
        const t = termSet(e.question);
        let shared = 0;
        for (const x of q) if (t.has(x)) shared++;
        const score = q.size && t.size ? shared / Math.max(q.size, t.size) : 0;
        return { entryId: e.id, question: e.question, answer: e.answer, score };
      })
      .filter((h) => h.score > 0)
      .sort((a, b) => b.score - a.score || a.entryId.localeCompare(b.entryId))
      .slice(0, req.limit || 5);
    return { results };
  }
}

export interface ApplyCall {
  request: tickets.ApplyTriageRequest;
  applied: boolean;
}

/** tickets.ApplyTriage (and ApplyTriageBatch, each result as ApplyTriage), idempotent by event id like the real one; records every call. */
export class TicketsStub {
  readonly calls: ApplyCall[] = [];
  /** The size of each ApplyTriageBatch call received. */
  readonly batches: number[] = [];
  private readonly appliedEvents = new Set<string>();
  /** Calls that fail with UNAVAILABLE before the stub starts answering. */
  failNext = 0;
  delayMs = 0;
  /** Ticket ids answered with not_found. */
  readonly missing = new Set<number>();
  private server: GrpcServerHandle | undefined;

  async start(): Promise<string> {
    this.server = await startStubServer([
      {
        definition: tickets.TicketsServiceService,
        implementation: {
          applyTriage: unaryHandler(logger, 'ApplyTriage', (req: tickets.ApplyTriageRequest) =>
            this.applyTriage(req),
          ),
          applyTriageBatch: unaryHandler(
            logger,
            'ApplyTriageBatch',
            async (req: tickets.ApplyTriageBatchRequest) => {
              this.batches.push(req.results.length);
              // Each result as its own ApplyTriage (failNext, delay and missing apply to each).
              const settled = await Promise.allSettled(req.results.map((r) => this.applyTriage(r)));
              return {
                results: settled.map((r) =>
                  r.status === 'fulfilled'
                    ? { applied: r.value.applied, ...NO_BATCH_ERROR }
                    : { applied: false, ...toBatchItemError(r.reason) },
                ),
              };
            },
          ),
          createTicket: unaryHandler(logger, 'CreateTicket', unimplemented),
          listTickets: unaryHandler(logger, 'ListTickets', unimplemented),
          getTicket: unaryHandler(logger, 'GetTicket', unimplemented),
          updateTicketStatus: unaryHandler(logger, 'UpdateTicketStatus', unimplemented),
        },
      },
    ]);
    return `127.0.0.1:${this.server.port}`;
  }

  async stop(): Promise<void> {
    await this.server?.stop(0);
  }

  /** Calls that changed a ticket (applied = true), for one ticket or all. */
  appliedCalls(ticketId?: number): ApplyCall[] {
    return this.calls.filter(
      (c) => c.applied && (ticketId === undefined || c.request.ticketId === ticketId),
    );
  }

  private async applyTriage(req: tickets.ApplyTriageRequest): Promise<tickets.ApplyTriageResponse> {
    if (this.delayMs > 0) await new Promise((r) => setTimeout(r, this.delayMs));
    if (this.failNext > 0) {
      this.failNext--;
      throw new AppError('service_unavailable', 'tickets is down (stub)');
    }
    if (this.missing.has(req.ticketId))
      throw new AppError('not_found', `ticket ${req.ticketId} not found`);
    const applied = !this.appliedEvents.has(req.eventId);
    this.appliedEvents.add(req.eventId);
    this.calls.push({ request: req, applied });
    return { ticket: undefined, applied };
  }
}

export interface StubReply {
  status?: number;
  /** The `content` of the assistant message (any string, also malformed JSON). */
  content?: string;
  /** A raw body instead of a completion built from `content`. */
  rawBody?: string;
  headers?: Record<string, string>;
  delayMs?: number;
}

export interface RecordedRequest {
  body: Record<string, unknown>;
  headers: IncomingMessage['headers'];
  /** Problems with the request shape; empty when it is what the service must send. */
  shapeErrors: string[];
}

/**
 * A local OpenAI-compatible server for POST /v1/chat/completions: checks the request
 * shape (model, messages, strict json_schema response_format) and plays recorded
 * replies in order (the last one repeats).
 */
export class OpenAiStub {
  readonly requests: RecordedRequest[] = [];
  replies: StubReply[] = [];
  private server: Server | undefined;
  private readonly sockets = new Set<import('node:net').Socket>();

  constructor(private readonly expectedModel: string) {}

  async start(): Promise<string> {
    this.server = createServer((req, res) => void this.handle(req, res));
    this.server.on('connection', (s) => {
      this.sockets.add(s);
      s.on('close', () => this.sockets.delete(s));
    });
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    const { port } = this.server.address() as import('node:net').AddressInfo;
    return `http://127.0.0.1:${port}/v1`;
  }

  async stop(): Promise<void> {
    for (const s of this.sockets) s.destroy();
    await new Promise<void>((resolve) =>
      this.server ? this.server.close(() => resolve()) : resolve(),
    );
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    let body: Record<string, unknown> = {};
    try {
      body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as Record<string, unknown>;
    } catch {
      // recorded as a shape error below
    }
    const shapeErrors = checkShape(req, body, this.expectedModel);
    const index = this.requests.length;
    this.requests.push({ body, headers: req.headers, shapeErrors });
    if (shapeErrors.length > 0) {
      res.writeHead(400, { 'content-type': 'application/json' });
      res.end(
        JSON.stringify({
          error: { message: shapeErrors.join('; '), type: 'invalid_request_error' },
        }),
      );
      return;
    }
    const reply = this.replies[Math.min(index, this.replies.length - 1)] ?? { status: 500 };
    if (reply.delayMs) await new Promise((r) => setTimeout(r, reply.delayMs));
    if (res.destroyed) return;
    const status = reply.status ?? 200;
    res.writeHead(status, { 'content-type': 'application/json', ...reply.headers });
    if (reply.rawBody !== undefined) {
      res.end(reply.rawBody);
    } else if (status !== 200) {
      res.end(
        JSON.stringify({ error: { message: `stub status ${status}`, type: 'server_error' } }),
      );
    } else {
      res.end(
        JSON.stringify({
          id: `chatcmpl-${index}`,
          object: 'chat.completion',
          created: Math.floor(Date.now() / 1000),
          model: this.expectedModel,
          choices: [
            {
              index: 0,
              finish_reason: 'stop',
              message: { role: 'assistant', content: reply.content ?? '', refusal: null },
            },
          ],
          usage: { prompt_tokens: 10, completion_tokens: 10, total_tokens: 20 },
        }),
      );
    }
  }
}

function checkShape(req: IncomingMessage, body: Record<string, unknown>, model: string): string[] {
  const errors: string[] = [];
  if (req.method !== 'POST' || !req.url?.endsWith('/chat/completions'))
    errors.push(`unexpected ${req.method} ${req.url}`);
  if (body.model !== model) errors.push(`model ${String(body.model)}, expected ${model}`);
  const messages = body.messages as Array<{ role?: string; content?: unknown }> | undefined;
  if (!Array.isArray(messages) || messages.length < 2)
    errors.push('messages must hold a system and a user message');
  else {
    if (messages[0]?.role !== 'system' || typeof messages[0].content !== 'string')
      errors.push('first message must be the system prompt');
    if (!messages.some((m) => m.role === 'user' && typeof m.content === 'string'))
      errors.push('no user message');
  }
  const rf = body.response_format as
    | {
        type?: string;
        json_schema?: {
          name?: string;
          strict?: boolean;
          schema?: { type?: string; required?: string[]; additionalProperties?: boolean };
        };
      }
    | undefined;
  if (rf?.type !== 'json_schema') errors.push('response_format.type must be json_schema');
  else {
    const js = rf.json_schema;
    if (!js?.name) errors.push('json_schema.name missing');
    if (js?.strict !== true) errors.push('json_schema.strict must be true');
    if (
      js?.schema?.type !== 'object' ||
      js.schema.additionalProperties !== false ||
      !Array.isArray(js.schema.required)
    ) {
      errors.push('json_schema.schema must be a closed object schema');
    }
  }
  return errors;
}
