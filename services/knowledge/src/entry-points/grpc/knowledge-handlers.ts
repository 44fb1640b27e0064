import {
  batchRequestIdsOf,
  invalidRequest,
  NO_BATCH_ERROR,
  TurnQueue,
  requestIdOf,
  settleEach,
  unaryHandler,
} from '@support-agent/shared';
import type { knowledge } from '@support-agent/proto';
import { embedTexts } from '../../domain/embed.js';
import { searchEntries, type KnowledgeDeps } from '../../domain/search.js';
import { countEntries, deleteEntries, upsertEntries } from '../../domain/upsert.js';
import { knowledgeMetrics } from '../../metrics.js';

/** Most searches one SearchBatch call takes (answers' triage sends at most KNOWLEDGE_SEARCH_BATCH, default 32). */
export const SEARCH_BATCH_MAX = 64;

/**
 * How long a turn of the event loop keeps starting searches before their answers are sent:
 * measured best of 0 (one per turn), 0.5, 1 and 2 ms, and of all at once (docs/performance.md).
 */
const TURN_BUDGET_MS = 1;

/** gRPC KnowledgeService: thin mapping between proto messages and the use cases. */
export function knowledgeHandlers(deps: KnowledgeDeps): knowledge.KnowledgeServiceServer {
  const { logger } = deps;

  /** One search, timed and (at debug level) logged: Search's and each of SearchBatch's. */
  const search = async (req: knowledge.SearchRequest, requestId: string | undefined) => {
    const started = performance.now();
    const results = await searchEntries(deps, {
      orgId: req.orgId,
      query: req.query,
      limit: req.limit,
    });
    const ms = performance.now() - started;
    knowledgeMetrics.searchDuration.observe(ms / 1000);
    // The line's fields are built only when it is written (searches are the hot path).
    if (logger.isLevelEnabled('debug')) {
      logger.debug(
        {
          requestId,
          orgId: req.orgId,
          results: results.length,
          topScore: results[0]?.score,
          ms: Math.round(ms),
        },
        'kb search',
      );
    }
    return results;
  };

  // A batch's searches take their turns among single ones (TurnQueue says why turns).
  const turns = new TurnQueue(TURN_BUDGET_MS);

  return {
    search: unaryHandler<knowledge.SearchRequest, knowledge.SearchResponse>(
      logger,
      'Search',
      async (req, call) => ({
        results: await turns.start(() => search(req, requestIdOf(call))),
      }),
    ),

    searchBatch: unaryHandler<knowledge.SearchBatchRequest, knowledge.SearchBatchResponse>(
      logger,
      'SearchBatch',
      async (req, call) => {
        if (req.searches.length < 1 || req.searches.length > SEARCH_BATCH_MAX) {
          throw invalidRequest(`searches must hold 1 to ${SEARCH_BATCH_MAX} searches`, 'searches');
        }
        const idOf = batchRequestIdsOf(call, req.searches.length);
        const settled = await settleEach(req.searches, { logger, method: 'SearchBatch' }, (s, i) =>
          turns.start(() => search(s, idOf(i))),
        );
        return {
          results: settled.map((s) =>
            'error' in s ? { results: [], ...s.error } : { ...NO_BATCH_ERROR, results: s.value },
          ),
        };
      },
    ),

    upsertEntries: unaryHandler<knowledge.UpsertEntriesRequest, knowledge.UpsertEntriesResponse>(
      logger,
      'UpsertEntries',
      async (req, call) => {
        const outcome = await upsertEntries(deps, req.orgId, req.entries);
        knowledgeMetrics.entriesUpserted.inc({ result: 'inserted' }, outcome.inserted);
        knowledgeMetrics.entriesUpserted.inc({ result: 'updated' }, outcome.updated);
        knowledgeMetrics.entriesUpserted.inc({ result: 'failed' }, outcome.failed.length);
        logger.info(
          {
            requestId: requestIdOf(call),
            orgId: req.orgId,
            inserted: outcome.inserted,
            updated: outcome.updated,
            failed: outcome.failed.length,
          },
          'kb entries upserted',
        );
        return outcome;
      },
    ),

    deleteEntries: unaryHandler<knowledge.DeleteEntriesRequest, knowledge.DeleteEntriesResponse>(
      logger,
      'DeleteEntries',
      async (req, call) => {
        const deleted = await deleteEntries(deps, req.orgId, req.ids);
        logger.info(
          { requestId: requestIdOf(call), orgId: req.orgId, deleted },
          'kb entries deleted',
        );
        return { deleted };
      },
    ),

    countEntries: unaryHandler<knowledge.CountEntriesRequest, knowledge.CountEntriesResponse>(
      logger,
      'CountEntries',
      async (req) => ({ count: await countEntries(deps, req.orgId) }),
    ),
  };
}

/** gRPC EmbeddingsService: the index's embedding provider, for other services. */
export function embeddingsHandlers(
  deps: Pick<KnowledgeDeps, 'embeddings' | 'logger'>,
): knowledge.EmbeddingsServiceServer {
  return {
    embed: unaryHandler<knowledge.EmbedRequest, knowledge.EmbedResponse>(
      deps.logger,
      'Embed',
      async (req) => {
        const { vectors, fingerprint } = await embedTexts(deps, req.texts);
        return { embeddings: vectors.map((v) => ({ values: Array.from(v) })), fingerprint };
      },
    ),
  };
}
