import { callUnary, createGrpcClient } from '@support-agent/shared';
import { knowledge } from '@support-agent/proto';

/** Typed calls to the knowledge service; every call has a deadline and carries the request id. */
export class KnowledgeClient {
  private readonly client: knowledge.KnowledgeServiceClient;

  constructor(
    readonly address: string,
    private readonly deadlineMs: number,
  ) {
    this.client = createGrpcClient(knowledge.KnowledgeServiceClient, address);
  }

  search(request: knowledge.SearchRequest, requestId?: string): Promise<knowledge.SearchResponse> {
    return callUnary(this.client.search.bind(this.client), request, {
      timeoutMs: this.deadlineMs,
      ...(requestId ? { requestId } : {}),
    });
  }

  close(): void {
    this.client.close();
  }
}
