import { answers, digest, knowledge, tickets } from '@support-agent/proto';
import { callUnary, createGrpcClient, DEFAULT_DEADLINE_MS, type CallSettings } from './grpc.js';
import { withPooledClientSerializers } from './grpc-serializers.js';

/** One unary method of a generated service definition (ts-proto `…Service` object). */
interface UnaryDefinition {
  requestStream: false;
  responseStream: false;
  requestSerialize: (value: never) => Buffer;
  responseDeserialize: (value: Buffer) => unknown;
}

type RequestOf<D> = D extends { requestSerialize: (value: infer R) => Buffer } ? R : never;
type ResponseOf<D> = D extends { responseDeserialize: (value: Buffer) => infer R } ? R : never;

/**
 * A promise client of one service API: each unary method as `(request, call?)`, where `call` is
 * the request id to send along or `{ timeoutMs, requestId }`. Every call has a deadline; failures
 * arrive as AppError (service_unavailable when the peer is down or too slow).
 */
export type ServiceClient<S> = {
  [K in keyof S]: (
    request: RequestOf<S[K]>,
    call?: string | CallSettings,
  ) => Promise<ResponseOf<S[K]>>;
} & { readonly address: string; close(): void };

export interface ServiceClientOptions<S> {
  /** Deadline of every call, in ms (default 5 s) … */
  deadlineMs?: number;
  /** … except these methods' (slow bulk operations). */
  deadlines?: Partial<Record<keyof S, number>>;
}

/** The generated client constructor of one service (ts-proto `…ServiceClient`). */
type ClientConstructor<S> = Parameters<typeof createGrpcClient<{ close(): void }>>[0] & {
  service: S;
};

/**
 * Methods that change nothing (any service's): a call that fails UNAVAILABLE before an answer
 * (its replica died) is sent again to another replica. The others are not: a creation, an
 * answer (a deflection) or an update is not repeated behind the caller's back.
 */
const READ_ONLY = new Set([
  'search',
  'searchBatch',
  'countEntries',
  'embed',
  'listTickets',
  'getTicket',
  'getLatestDigest',
  'getUsage',
  'classifyTicket',
  'getTriageStatus',
  'getTriageTrainingJob',
  'listTriageModelVersions',
  'getTriageModel',
]);

/**
 * Builds the promise client of a service API on one channel (shared channel options, metrics
 * and trace interceptors of createGrpcClient). Consumers wrap it in a thin adapter of their
 * own port, or use it as the port when its shape is the port's.
 */
export function createServiceClient<S extends Record<string, UnaryDefinition>>(
  Ctor: ClientConstructor<S>,
  address: string,
  options: ServiceClientOptions<S> = {},
): ServiceClient<S> {
  const retryable = Object.entries(Ctor.service)
    .filter(([name]) => READ_ONLY.has(name))
    .map(([, d]) => (d as unknown as { path: string }).path);
  // Requests encoded with the reused protobuf writer (grpc-serializers.ts).
  const client = createGrpcClient(
    withPooledClientSerializers(Ctor),
    address,
    retryable,
  ) as unknown as Record<string, Parameters<typeof callUnary>[0]> & { close(): void };
  const api: Record<string, unknown> = { address, close: () => client.close() };
  for (const name of Object.keys(Ctor.service)) {
    const method = client[name]!.bind(client);
    const timeoutMs = options.deadlines?.[name] ?? options.deadlineMs ?? DEFAULT_DEADLINE_MS;
    api[name] = (request: unknown, call?: string | CallSettings) =>
      callUnary(
        method,
        request,
        typeof call === 'string' ? { timeoutMs, requestId: call } : { timeoutMs, ...call },
      );
  }
  return api as ServiceClient<S>;
}

export type TicketsClient = ServiceClient<tickets.TicketsServiceService>;
export type KnowledgeClient = ServiceClient<knowledge.KnowledgeServiceService>;
export type EmbeddingsClient = ServiceClient<knowledge.EmbeddingsServiceService>;
export type AnswersClient = ServiceClient<answers.AnswersServiceService>;
export type DigestClient = ServiceClient<digest.DigestServiceService>;
export type TriageClient = ServiceClient<answers.TriageServiceService>;

/**
 * One hit of knowledge.Search as answers and digest use it: the SearchHit message itself;
 * `score` is calibrated to [0,1]: ~1 answers the query, ~0 is unrelated.
 */
export type KbHit = knowledge.SearchHit;

/** The factory of one service API's client: `(address, options?)` → its ServiceClient. */
const clientFactory =
  <S extends Record<string, UnaryDefinition>>(Ctor: ClientConstructor<S>) =>
  (address: string, options?: ServiceClientOptions<S>): ServiceClient<S> =>
    createServiceClient(Ctor, address, options);

/** tickets.v1.TicketsService at `address` (host:port). */
export const createTicketsClient = clientFactory(tickets.TicketsServiceClient);
/** knowledge.v1.KnowledgeService at `address`. */
export const createKnowledgeClient = clientFactory(knowledge.KnowledgeServiceClient);
/** knowledge.v1.EmbeddingsService at `address` (the knowledge service's address). */
export const createEmbeddingsClient = clientFactory(knowledge.EmbeddingsServiceClient);
/** answers.v1.AnswersService at `address`. */
export const createAnswersClient = clientFactory(answers.AnswersServiceClient);
/** answers.v1.TriageService (each organization's own triage) at `address` (the answers service's). */
export const createTriageClient = clientFactory(answers.TriageServiceClient);
/** digest.v1.DigestService at `address`. */
export const createDigestClient = clientFactory(digest.DigestServiceClient);
