import { knowledge } from '@support-agent/proto';
import type { KnowledgeUpstream } from '../../domain/ports.js';
import { GrpcUpstream } from './grpc-upstream.js';

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
