import { makeGenericClientConstructor } from '@grpc/grpc-js';
import { knowledge } from '@support-agent/proto';
import {
  AppError,
  createKnowledgeClient,
  createServiceClient,
  type ServiceClientOptions,
} from '@support-agent/shared';
import { searchResultsOf } from '../../domain/agent-operations.js';
import type { KnowledgeUpstream } from '../../domain/ports.js';
import { searchResultsJson } from './search-results-json.js';

/** KnowledgeService's Search with the response left as the bytes that came over the wire. */
const SEARCH_BYTES = {
  search: {
    ...knowledge.KnowledgeServiceService.search,
    responseDeserialize: (bytes: Buffer): Buffer => bytes,
  },
};
const SearchBytesClient = makeGenericClientConstructor(
  SEARCH_BYTES,
  knowledge.KnowledgeServiceClient.serviceName,
) as unknown as Parameters<typeof createServiceClient<typeof SEARCH_BYTES>>[0];

/**
 * The knowledge port: the shared KnowledgeClient, plus Search answered as the public
 * SearchResults JSON written from the response's protobuf bytes (search-results-json.ts), so
 * the gateway builds no strings or objects for the hits it passes on. Both clients have the
 * same target and channel options, so grpc-js gives them one connection.
 */
export function openKnowledgeUpstream(
  address: string,
  options: ServiceClientOptions<knowledge.KnowledgeServiceService>,
): KnowledgeUpstream & { close(): void } {
  const client = createKnowledgeClient(address, options);
  const bytes = createServiceClient(SearchBytesClient, address, {
    ...(options.deadlineMs === undefined ? {} : { deadlineMs: options.deadlineMs }),
  });
  return {
    search: client.search,
    upsertEntries: client.upsertEntries,
    deleteEntries: client.deleteEntries,
    countEntries: client.countEntries,
    async searchResultsJson(request, requestId) {
      const pb = await bytes.search(request, requestId);
      try {
        return (
          searchResultsJson(pb) ??
          // Text that is not valid UTF-8: decoded as usual (invalid bytes become U+FFFD).
          Buffer.from(JSON.stringify(searchResultsOf(knowledge.SearchResponse.decode(pb))))
        );
      } catch (err) {
        // What grpc-js reports when a response cannot be deserialized.
        throw new AppError('internal_error', 'unreadable search response', { cause: err });
      }
    },
    close() {
      client.close();
      bytes.close();
    },
  };
}
