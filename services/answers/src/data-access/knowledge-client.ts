import { callUnary, createGrpcClient } from '@support-agent/shared';
import { knowledge } from '@support-agent/proto';
import type { KbHit, KnowledgeSearch } from '../domain/ports.js';

/** knowledge.Search over gRPC with a deadline; failures arrive as AppError('service_unavailable'). */
export class KnowledgeClient implements KnowledgeSearch {
  private readonly client: knowledge.KnowledgeServiceClient;

  constructor(
    address: string,
    private readonly deadlineMs: number,
  ) {
    this.client = createGrpcClient(knowledge.KnowledgeServiceClient, address);
  }

  async search(orgId: string, query: string, limit: number, deadline?: number): Promise<KbHit[]> {
    // Never wait longer than the caller of this answer will.
    const timeoutMs = Math.max(1, Math.min(this.deadlineMs, (deadline ?? Infinity) - Date.now()));
    const res = await callUnary(
      this.client.search.bind(this.client),
      { orgId, query, limit },
      { timeoutMs },
    );
    return res.results.map((h) => ({
      entryId: h.entryId,
      question: h.question,
      answer: h.answer,
      score: h.score,
    }));
  }

  close(): void {
    this.client.close();
  }
}
