import type { Logger } from '@support-agent/shared';
import type { EmbeddingProvider, IndexCatalog, KnowledgeIndex } from './ports.js';
import { indexEntries } from './upsert.js';

export interface ReindexOptions {
  /** Collections to read; default: every other collection of the prefix. */
  sources?: string[];
  /** Delete each source collection once it has been copied. */
  dropSources?: boolean;
  /** Entries read, embedded and written per step. */
  batchSize?: number;
}

export interface SourceReport {
  collection: string;
  organizations: number;
  read: number;
  written: number;
  /** Entries the target already held in a version at least as recent. */
  skipped: number;
  dropped: boolean;
}

/**
 * Re-embeds every stored entry into the collection of the current embedding
 * fingerprint, from its stored source text. An entry the target already holds with
 * an equal or newer write time is left alone, so re-indexing while the service
 * runs never overwrites a newer edit. Naming the target itself as a source
 * re-embeds it in place.
 */
export async function reindex(
  deps: {
    catalog: IndexCatalog;
    target: KnowledgeIndex;
    embeddings: EmbeddingProvider;
    logger: Logger;
  },
  options: ReindexOptions = {},
): Promise<SourceReport[]> {
  const { catalog, target, logger } = deps;
  const batchSize = options.batchSize ?? 256;
  const sources = options.sources ?? (await catalog.list()).filter((c) => c !== target.collection);
  const reports: SourceReport[] = [];
  for (const collection of sources) {
    const inPlace = collection === target.collection;
    const source = inPlace ? target : await catalog.openForRead(collection);
    const report: SourceReport = {
      collection,
      organizations: 0,
      read: 0,
      written: 0,
      skipped: 0,
      dropped: false,
    };
    try {
      for (const orgId of await source.listOrgs()) {
        report.organizations++;
        let after: string | undefined;
        do {
          const page = await source.scroll(orgId, after, batchSize);
          report.read += page.entries.length;
          const current = inPlace
            ? new Map()
            : await target.versions(
                orgId,
                page.entries.map((e) => e.id),
              );
          const todo = page.entries.filter(
            (e) => inPlace || !((current.get(e.id)?.updatedAt ?? -1) >= e.updatedAt),
          );
          report.skipped += page.entries.length - todo.length;
          if (todo.length > 0) {
            await target.upsert(orgId, await indexEntries(deps, todo));
            report.written += todo.length;
          }
          after = page.next;
        } while (after !== undefined);
        logger.info(
          { source: collection, target: target.collection, orgId },
          'organization re-indexed',
        );
      }
    } finally {
      if (!inPlace) await source.close();
    }
    if (options.dropSources && !inPlace) {
      await catalog.drop(collection);
      report.dropped = true;
    }
    reports.push(report);
  }
  return reports;
}
