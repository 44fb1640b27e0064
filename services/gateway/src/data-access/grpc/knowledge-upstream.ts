import { makeGenericClientConstructor } from '@grpc/grpc-js';
import { knowledge } from '@support-agent/proto';
import {
  AppError,
  batchRequestId,
  CallBatcher,
  createKnowledgeClient,
  createServiceClient,
  DEFAULT_DEADLINE_MS,
  fromBatchItemError,
  type ServiceClientOptions,
} from '@support-agent/shared';
import { searchResultsOf } from '../../domain/agent-operations.js';
import type { KnowledgeUpstream } from '../../domain/ports.js';
import { searchBatchItems, searchResultsJson } from './search-results-json.js';

/** KnowledgeService's Search and SearchBatch with the responses left as the bytes that came over the wire. */
const SEARCH_BYTES = {
  search: {
    ...knowledge.KnowledgeServiceService.search,
    responseDeserialize: (bytes: Buffer): Buffer => bytes,
  },
  searchBatch: {
    ...knowledge.KnowledgeServiceService.searchBatch,
    responseDeserialize: (bytes: Buffer): Buffer => bytes,
  },
};
const SearchBytesClient = makeGenericClientConstructor(
  SEARCH_BYTES,
  knowledge.KnowledgeServiceClient.serviceName,
) as unknown as Parameters<typeof createServiceClient<typeof SEARCH_BYTES>>[0];

interface PendingSearch {
  request: knowledge.SearchRequest;
  requestId: string | undefined;
}

/** What grpc-js reports when a response cannot be deserialized. */
function unreadable(err: unknown): AppError {
  return new AppError('internal_error', 'unreadable search response', { cause: err });
}

/**
 * The knowledge port: the shared KnowledgeClient, plus Search answered as the public
 * SearchResults JSON written from the response's protobuf bytes (search-results-json.ts), so
 * the gateway builds no strings or objects for the hits it passes on. Searches asked in the
 * same turn of the event loop leave as one SearchBatch call of at most `searchBatch`
 * (CallBatcher), so the per-call work of grpc-js and HTTP/2 on both sides is paid once per
 * batch; 1 sends each as its own Search. Both clients have the same target and channel
 * options, so grpc-js gives them one connection.
 */
export function openKnowledgeUpstream(
  address: string,
  options: ServiceClientOptions<knowledge.KnowledgeServiceService>,
  searchBatch = 32,
): KnowledgeUpstream & { close(): void } {
  const client = createKnowledgeClient(address, options);
  const bytes = createServiceClient(SearchBytesClient, address, {
    ...(options.deadlineMs === undefined ? {} : { deadlineMs: options.deadlineMs }),
  });
  const batcher = new CallBatcher<PendingSearch, Buffer>(
    searchBatch,
    ({ request, requestId }, timeoutMs) =>
      bytes.search(request, { timeoutMs, ...(requestId ? { requestId } : {}) }),
    async (pending, timeoutMs) => {
      const pb = await bytes.searchBatch(
        { searches: pending.map((p) => p.request) },
        { timeoutMs, requestId: batchRequestId(pending.map((p) => p.requestId)) },
      );
      try {
        return searchBatchItems(pb).map((item) =>
          'ok' in item
            ? item.ok
            : fromBatchItemError(knowledge.SearchBatchResult.decode(item.failed)),
        );
      } catch (err) {
        throw unreadable(err);
      }
    },
  );
  const timeoutMs = options.deadlineMs ?? DEFAULT_DEADLINE_MS;
  return {
    search: client.search,
    upsertEntries: client.upsertEntries,
    deleteEntries: client.deleteEntries,
    countEntries: client.countEntries,
    async searchResultsJson(request, requestId) {
      const pb = await batcher.call({ request, requestId }, timeoutMs);
      try {
        return (
          searchResultsJson(pb) ??
          // Text that is not valid UTF-8: decoded as usual (invalid bytes become U+FFFD).
          Buffer.from(JSON.stringify(searchResultsOf(knowledge.SearchResponse.decode(pb))))
        );
      } catch (err) {
        throw unreadable(err);
      }
    },
    close() {
      client.close();
      bytes.close();
    },
  };
}
