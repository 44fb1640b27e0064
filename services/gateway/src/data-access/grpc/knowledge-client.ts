import type { ServiceError } from '@grpc/grpc-js';
import { knowledge } from '@support-agent/proto';
import { AppError } from '@support-agent/shared';
import { searchResultsOf } from '../../domain/agent-operations.js';
import type { KnowledgeUpstream } from '../../domain/ports.js';
import { GrpcUpstream, type UnaryMethod } from './grpc-upstream.js';
import { searchResultsJson } from './search-results-json.js';

const SEARCH = knowledge.KnowledgeServiceService.search;
/** The response as it came over the wire: its bytes are transcoded, never decoded. */
const keepBytes = (bytes: Buffer): Buffer => bytes;

/** Typed calls to the knowledge service; every call has a deadline and carries the request id. */
export class KnowledgeClient
  extends GrpcUpstream<knowledge.KnowledgeServiceClient>
  implements KnowledgeUpstream
{
  /** @param bulkDeadlineMs deadline of UpsertEntries (a batch is embedded before it returns) */
  constructor(
    address: string,
    deadlineMs: number,
    private readonly bulkDeadlineMs: number = deadlineMs,
  ) {
    super(address, deadlineMs, knowledge.KnowledgeServiceClient);
  }

  search(request: knowledge.SearchRequest, requestId?: string): Promise<knowledge.SearchResponse> {
    return this.unary(this.client.search, request, requestId);
  }

  /**
   * Search as the public SearchResults JSON, written from the response's protobuf bytes
   * (search-results-json.ts): no strings or objects are built for the hits.
   */
  async searchResultsJson(
    request: knowledge.SearchRequest,
    requestId?: string,
  ): Promise<Uint8Array> {
    const bytes = await this.unary(this.searchBytes, request, requestId);
    try {
      return (
        searchResultsJson(bytes) ??
        // Text that is not valid UTF-8: decoded as usual (invalid bytes become U+FFFD).
        Buffer.from(JSON.stringify(searchResultsOf(knowledge.SearchResponse.decode(bytes))))
      );
    } catch (err) {
      // What grpc-js reports when a response cannot be deserialized.
      throw new AppError('internal_error', 'unreadable search response', { cause: err });
    }
  }

  /** Search with the response left as bytes (the generated client would decode it). */
  private readonly searchBytes: UnaryMethod<knowledge.SearchRequest, Buffer> = (
    request,
    metadata,
    options,
    callback,
  ) =>
    this.client.makeUnaryRequest(
      SEARCH.path,
      SEARCH.requestSerialize,
      keepBytes,
      request,
      metadata,
      options,
      // grpc-js types the response as possibly undefined; it is set whenever error is null.
      callback as (error: ServiceError | null, value?: Buffer) => void,
    );

  upsertEntries(
    request: knowledge.UpsertEntriesRequest,
    requestId?: string,
  ): Promise<knowledge.UpsertEntriesResponse> {
    return this.unary(this.client.upsertEntries, request, requestId, this.bulkDeadlineMs);
  }

  deleteEntries(
    request: knowledge.DeleteEntriesRequest,
    requestId?: string,
  ): Promise<knowledge.DeleteEntriesResponse> {
    return this.unary(this.client.deleteEntries, request, requestId);
  }

  countEntries(
    request: knowledge.CountEntriesRequest,
    requestId?: string,
  ): Promise<knowledge.CountEntriesResponse> {
    return this.unary(this.client.countEntries, request, requestId);
  }
}
