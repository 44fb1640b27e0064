import { counter, histogram } from '@support-agent/shared';

/** The knowledge service's own Prometheus metrics (the gRPC RED metrics come from shared). */
export const knowledgeMetrics = {
  searchDuration: histogram(
    'kb_search_duration_seconds',
    'Time of a knowledge-base search (embedding the query + index lookup).',
  ),
  entriesUpserted: counter(
    'kb_entries_upserted_total',
    'Knowledge-base entries written by UpsertEntries, by result (inserted, updated, failed).',
    ['result'],
  ),
};
