import {
  CallBatcher,
  createKnowledgeClient,
  fromBatchItemError,
  type KnowledgeClient,
} from '@support-agent/shared';
import type { knowledge } from '@support-agent/proto';
import type { KbHit, KnowledgeSearch } from '../domain/ports.js';

/**
 * The KnowledgeSearch port over knowledge.Search (the shared client, with a deadline).
 * Searches asked together (triage's batch of tickets, started at once) leave as one
 * SearchBatch call of at most `batchMax` searches (CallBatcher); 1 sends each as a Search.
 */
export class KnowledgeSearchClient implements KnowledgeSearch {
  private readonly client: KnowledgeClient;
  private readonly batcher: CallBatcher<knowledge.SearchRequest, KbHit[]>;

  constructor(
    address: string,
    private readonly deadlineMs: number,
    batchMax = 1,
  ) {
    const client = createKnowledgeClient(address, { deadlineMs });
    this.client = client;
    this.batcher = new CallBatcher(
      batchMax,
      async (request, timeoutMs) => (await client.search(request, { timeoutMs })).results,
      async (searches, timeoutMs) =>
        (await client.searchBatch({ searches }, { timeoutMs })).results.map((r) =>
          r.errorCode === '' ? r.results : fromBatchItemError(r),
        ),
    );
  }

  search(orgId: string, query: string, limit: number, deadline?: number): Promise<KbHit[]> {
    // Never wait longer than the caller of this answer will.
    const timeoutMs = Math.max(1, Math.min(this.deadlineMs, (deadline ?? Infinity) - Date.now()));
    return this.batcher.call({ orgId, query, limit }, timeoutMs);
  }

  close(): void {
    this.client.close();
  }
}
