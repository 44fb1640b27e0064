import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createLogger } from '@support-agent/shared';
import {
  collectionName,
  EmbeddedIndex,
  HashedEmbeddings,
  upsertEntries,
  type KnowledgeDeps,
} from '@support-agent/knowledge/search';
import type { CorpusEntry } from './eval-data.js';

/** Entries per upsert: the service's own import batches are of this size. */
const CHUNK = 500;

/** An FAQ collection indexed in this process, as the knowledge service indexes it. */
export interface InProcessKb {
  orgId: string;
  deps: KnowledgeDeps;
  index: EmbeddedIndex;
  embeddings: HashedEmbeddings;
  /** Closes the index and removes its temporary directory. */
  close(): Promise<void>;
}

/**
 * Imports `corpus` into a fresh embedded index (in a temporary directory) with the built-in
 * embeddings, through knowledge's own upsert: the hits and vectors an organization holding
 * this KB gets from the service, without the service around them.
 */
export async function openInProcessKb(corpus: CorpusEntry[], name: string): Promise<InProcessKb> {
  const dir = mkdtempSync(join(tmpdir(), `${name}-`));
  const embeddings = new HashedEmbeddings();
  const index = new EmbeddedIndex({
    dir,
    collection: collectionName(name, embeddings.fingerprint),
    dimensions: embeddings.dimensions,
  });
  const close = async () => {
    await index.close();
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    await index.init();
    const deps: KnowledgeDeps = {
      index,
      embeddings,
      logger: createLogger(name, 'warn'),
      now: Date.now,
    };
    for (let i = 0; i < corpus.length; i += CHUNK) {
      const chunk = corpus
        .slice(i, i + CHUNK)
        .map((c) => ({ id: c.faq_id, question: c.question, answer: c.answer, tags: [] }));
      const res = await upsertEntries(deps, name, chunk);
      if (res.failed.length > 0)
        throw new Error(`KB import failed: ${JSON.stringify(res.failed.slice(0, 3))}`);
    }
    return { orgId: name, deps, index, embeddings, close };
  } catch (err) {
    await close();
    throw err;
  }
}
