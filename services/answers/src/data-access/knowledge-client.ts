import { createKnowledgeClient, type KnowledgeClient } from '@support-agent/shared';
import type { KbHit, KnowledgeSearch } from '../domain/ports.js';

/** The KnowledgeSearch port over knowledge.Search (the shared client, with a deadline). */
export class KnowledgeSearchClient implements KnowledgeSearch {
  private readonly client: KnowledgeClient;

  constructor(
    address: string,
    private readonly deadlineMs: number,
  ) {
    this.client = createKnowledgeClient(address, { deadlineMs });
  }

  async search(orgId: string, query: string, limit: number, deadline?: number): Promise<KbHit[]> {
    // Never wait longer than the caller of this answer will.
    const timeoutMs = Math.max(1, Math.min(this.deadlineMs, (deadline ?? Infinity) - Date.now()));
    const res = await this.client.search({ orgId, query, limit }, { timeoutMs });
    return res.results;
  }

  close(): void {
    this.client.close();
  }
}
