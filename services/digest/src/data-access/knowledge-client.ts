import {
  createEmbeddingsClient,
  createKnowledgeClient,
  type EmbeddingsClient,
  type KnowledgeClient,
  type Logger,
} from '@support-agent/shared';
import type { Embedder, Embeddings, KbHit, KnowledgeSearch } from '../domain/ports.js';

/**
 * The KnowledgeSearch and Embedder ports over the knowledge service's KnowledgeService.Search
 * and EmbeddingsService.Embed (the shared clients, both at KNOWLEDGE_ADDR, with a deadline).
 */
export class KnowledgePorts implements KnowledgeSearch, Embedder {
  private readonly knowledge: KnowledgeClient;
  private readonly embeddings: EmbeddingsClient;

  constructor(address: string, deadlineMs: number) {
    this.knowledge = createKnowledgeClient(address, { deadlineMs });
    this.embeddings = createEmbeddingsClient(address, { deadlineMs });
  }

  async search(orgId: string, query: string, limit: number): Promise<KbHit[]> {
    const res = await this.knowledge.search({ orgId, query, limit });
    return res.results;
  }

  async embed(texts: string[]): Promise<Embeddings> {
    const res = await this.embeddings.embed({ texts });
    return {
      vectors: res.embeddings.map((e) => Float32Array.from(e.values)),
      fingerprint: res.fingerprint,
    };
  }

  close(): void {
    this.knowledge.close();
    this.embeddings.close();
  }
}

/**
 * Topic embeddings: knowledge's EmbeddingsService (so topics are grouped in the
 * same vector space as the KB), in batches; if it is unavailable or answers
 * inconsistently, every text of the build falls back to the built-in lexical
 * embeddings (one vector space per build, never mixed).
 */
export class FallbackEmbedder implements Embedder {
  constructor(
    private readonly remote: Embedder | undefined,
    private readonly fallback: Embedder,
    private readonly logger: Logger,
    private readonly batchSize = 128,
  ) {}

  async embed(texts: string[]): Promise<Embeddings> {
    if (this.remote && texts.length > 0) {
      try {
        return await this.embedRemote(this.remote, texts);
      } catch (err) {
        this.logger.warn(
          { err: (err as Error).message },
          'knowledge embeddings unavailable; using the built-in lexical embeddings',
        );
      }
    }
    return this.fallback.embed(texts);
  }

  private async embedRemote(remote: Embedder, texts: string[]): Promise<Embeddings> {
    const vectors: Float32Array[] = [];
    let fingerprint: string | undefined;
    for (let i = 0; i < texts.length; i += this.batchSize) {
      const batch = texts.slice(i, i + this.batchSize);
      const res = await remote.embed(batch);
      if (res.vectors.length !== batch.length)
        throw new Error(`asked ${batch.length} embeddings, got ${res.vectors.length}`);
      if (fingerprint !== undefined && res.fingerprint !== fingerprint)
        throw new Error('the embeddings model changed during the build');
      fingerprint = res.fingerprint;
      vectors.push(...res.vectors);
    }
    const dims = vectors[0]?.length ?? 0;
    if (dims === 0 || vectors.some((v) => v.length !== dims))
      throw new Error('embeddings of inconsistent dimensions');
    return { vectors, fingerprint: fingerprint ?? 'unknown' };
  }
}
