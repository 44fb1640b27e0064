import { QdrantClient, QdrantClientTimeoutError, type Schemas } from '@qdrant/js-client-rest';
import { AppError, chunks, type Logger } from '@support-agent/shared';
import { candidateSetOf, noCandidates, type CandidateWithVector } from '../domain/candidate-set.js';
import { fingerprintKey, isCollectionOf } from '../domain/fingerprint.js';
import { pointIdOf } from '../domain/hashing.js';
import type {
  CandidateQuery,
  CandidateSet,
  EntryPage,
  EntryVersion,
  Fingerprint,
  IndexCatalog,
  IndexedEntry,
  KnowledgeIndex,
  QueryTerm,
  StoredEntry,
  WriteOutcome,
} from '../domain/ports.js';
import { querySparseVector } from '../domain/scoring.js';
import {
  CANDIDATE_FIELDS,
  DENSE,
  ENTRY_FIELDS,
  SPARSE,
  toCandidate,
  toEntry,
  toPayload,
  type Payload,
} from './qdrant-points.js';

/**
 * The Qdrant adapter: one collection per embedding fingerprint, shared by all
 * organizations. `org_id` is a keyword payload index marked `is_tenant` (Qdrant
 * co-locates each tenant's points and, with `m: 0, payload_m: 16`, builds one HNSW
 * graph per tenant instead of a global one). Every point carries a named dense
 * vector (`dense`, cosine) and a named sparse vector (`sparse`, BM25 term weights
 * computed here, IDF applied by Qdrant's `idf` modifier).
 *
 * Tenant isolation rule: EVERY query, scroll, count and delete carries the org_id
 * filter (see orgFilter); point ids are UUIDv5 of `${org}:${entryId}`.
 */

/** Points per upsert request. */
const UPSERT_BATCH = 64;
/** How long per-organization term statistics are reused (this replica's own writes clear them). */
const STATS_TTL_MS = 15_000;
const STATS_CACHE_ORGS = 1_000;
/** Distinct organizations listed when re-indexing. */
const MAX_ORGS = 1_000_000;

type Filter = Schemas['Filter'];

/** The tenant filter; `extra` conditions are AND-ed. */
export function orgFilter(orgId: string, ...extra: Schemas['Condition'][]): Filter {
  return { must: [{ key: 'org_id', match: { value: orgId } }, ...extra] };
}

export interface QdrantIndexOptions {
  client: QdrantClient;
  collection: string;
  fingerprint: Fingerprint;
  logger?: Logger | undefined;
  readOnly?: boolean;
}

export interface QdrantConnection {
  url: string;
  apiKey?: string | undefined;
  timeoutMs: number;
}

export function createQdrantClient(connection: QdrantConnection): QdrantClient {
  return new QdrantClient({
    url: connection.url,
    ...(connection.apiKey ? { apiKey: connection.apiKey } : {}),
    timeout: connection.timeoutMs,
    // The version probe is a fire-and-forget request that only prints warnings.
    checkCompatibility: false,
  });
}

interface TermStats {
  at: number;
  docCount: number | undefined;
  df: Map<string, number>;
}

export class QdrantIndex implements KnowledgeIndex {
  readonly collection: string;
  private readonly client: QdrantClient;
  private readonly stats = new Map<string, TermStats>();

  constructor(private readonly options: QdrantIndexOptions) {
    this.collection = options.collection;
    this.client = options.client;
  }

  /** Creates the collection and payload indexes if missing; safe to run from every replica at once. */
  async init(): Promise<void> {
    const c = this.collection;
    const { exists } = await this.call('collection exists', () => this.client.collectionExists(c));
    if (!exists) {
      if (this.options.readOnly) throw new Error(`qdrant collection ${c} does not exist`);
      try {
        await this.client.createCollection(c, {
          vectors: { [DENSE]: { size: this.options.fingerprint.dimensions, distance: 'Cosine' } },
          sparse_vectors: { [SPARSE]: { modifier: 'idf' } },
          hnsw_config: { m: 0, payload_m: 16 },
          // int8 copies of the dense vectors in RAM for the graph search (a quarter of the
          // memory; Qdrant rescores with the originals). Scoring here reads the originals.
          quantization_config: { scalar: { type: 'int8', quantile: 0.99, always_ram: true } },
        });
        this.options.logger?.info({ collection: c }, 'qdrant collection created');
      } catch (err) {
        // Another replica created it between our check and our create.
        const again = await this.call('collection exists', () => this.client.collectionExists(c));
        if (!again.exists) throw this.unavailable('create collection', err);
      }
    } else {
      const info = await this.call('get collection', () => this.client.getCollection(c));
      const vectors = info.config.params.vectors as Record<string, { size?: number }> | undefined;
      const size = vectors?.[DENSE]?.size;
      if (size !== this.options.fingerprint.dimensions) {
        throw new Error(
          `qdrant collection ${c} has dense vectors of size ${size}, expected ${this.options.fingerprint.dimensions}`,
        );
      }
    }
    if (this.options.readOnly) return;
    await this.call('create payload index', () =>
      this.client.createPayloadIndex(c, {
        field_name: 'org_id',
        field_schema: { type: 'keyword', is_tenant: true },
        wait: true,
      }),
    );
    await this.call('create payload index', () =>
      this.client.createPayloadIndex(c, {
        field_name: 'terms',
        field_schema: 'keyword',
        wait: true,
      }),
    );
  }

  async upsert(orgId: string, entries: IndexedEntry[]): Promise<WriteOutcome[]> {
    this.assertWritable();
    if (entries.length === 0) return [];
    const existing = await this.versions(
      orgId,
      entries.map((e) => e.id),
    );
    const embedding = fingerprintKey(this.options.fingerprint);
    const points: Schemas['PointStruct'][] = entries.map((e) => {
      const payload = toPayload(orgId, e, embedding);
      return {
        id: pointIdOf(orgId, e.id),
        vector: {
          [DENSE]: Array.from(e.dense),
          [SPARSE]: { indices: Array.from(e.sparse.indices), values: Array.from(e.sparse.values) },
        },
        payload: payload as unknown as Record<string, unknown>,
      };
    });
    for (const batch of chunks(points, UPSERT_BATCH)) {
      await this.call('upsert', () =>
        this.client.upsert(this.collection, { wait: true, points: batch }),
      );
    }
    this.stats.delete(orgId);
    return entries.map((e) => (existing.has(e.id) ? 'updated' : 'inserted'));
  }

  async versions(orgId: string, ids: string[]): Promise<Map<string, EntryVersion>> {
    const out = new Map<string, EntryVersion>();
    if (ids.length === 0) return out;
    const res = await this.call('scroll', () =>
      this.client.scroll(this.collection, {
        filter: orgFilter(orgId, { has_id: ids.map((id) => pointIdOf(orgId, id)) }),
        limit: ids.length,
        with_payload: ['entry_id', 'content_hash', 'updated_at'],
        with_vector: false,
      }),
    );
    for (const p of res.points) {
      const payload = (p.payload ?? {}) as Partial<Payload>;
      if (typeof payload.entry_id === 'string') {
        out.set(payload.entry_id, {
          contentHash: String(payload.content_hash ?? ''),
          updatedAt: Number(payload.updated_at ?? 0),
        });
      }
    }
    return out;
  }

  async delete(orgId: string, ids: string[]): Promise<number> {
    this.assertWritable();
    if (ids.length === 0) return 0;
    const filter = orgFilter(orgId, { has_id: ids.map((id) => pointIdOf(orgId, id)) });
    const { count } = await this.call('count', () =>
      this.client.count(this.collection, { filter, exact: true }),
    );
    if (count === 0) return 0;
    await this.call('delete', () => this.client.delete(this.collection, { wait: true, filter }));
    this.stats.delete(orgId);
    return count;
  }

  async count(orgId: string): Promise<number> {
    const { count } = await this.call('count', () =>
      this.client.count(this.collection, { filter: orgFilter(orgId), exact: true }),
    );
    return count;
  }

  /**
   * One Query API call: a dense and a sparse prefetch (each tenant-filtered) fused with RRF,
   * the fused candidates rescored by the dense query (so each point's score is its cosine with
   * the query, computed by Qdrant from the stored vector), returning the payload and the
   * sparse vectors; in parallel, the organization's term statistics. The dense vectors
   * themselves are not fetched: as JSON they were most of the response (≈ 1.2 MB for 100
   * candidates at 512 dimensions, ≈ 3.7 ms of JSON.parse alone).
   */
  async candidates(query: CandidateQuery): Promise<CandidateSet> {
    const filter = orgFilter(query.orgId);
    const dense = query.dense ? Array.from(query.dense) : null;
    const prefetch: Schemas['Prefetch'][] = [];
    if (dense) prefetch.push({ query: dense, using: DENSE, filter, limit: query.limit });
    if (query.terms.length > 0) {
      const sparse = querySparseVector(query.terms);
      prefetch.push({
        query: { indices: Array.from(sparse.indices), values: Array.from(sparse.values) },
        using: SPARSE,
        filter,
        limit: query.limit,
      });
    }
    if (prefetch.length === 0) return noCandidates(query.terms);
    const returned = { with_payload: CANDIDATE_FIELDS, with_vector: [SPARSE] };
    const request: Schemas['QueryRequest'] =
      prefetch.length === 1
        ? { ...prefetch[0]!, filter, limit: query.limit, ...returned }
        : {
            prefetch: { prefetch, query: { fusion: 'rrf' }, filter, limit: query.limit },
            query: dense,
            using: DENSE,
            filter,
            limit: query.limit,
            ...returned,
          };

    const [response, stats] = await Promise.all([
      this.call('query', () => this.client.query(this.collection, request)),
      this.termStats(query.orgId, query.terms),
    ]);
    const candidates: CandidateWithVector[] = [];
    for (const point of response.points) {
      const candidate = toCandidate(point, dense !== null);
      if (candidate) candidates.push(candidate);
    }
    const documentFrequency = new Map<number, number>();
    for (const t of query.terms) documentFrequency.set(t.id, stats.df.get(t.term) ?? 0);
    return candidateSetOf(
      query.terms,
      { docCount: stats.docCount, documentFrequency },
      candidates,
      query.dense !== null,
    );
  }

  async listOrgs(): Promise<string[]> {
    const res = await this.call('facet', () =>
      this.client.facet(this.collection, { key: 'org_id', limit: MAX_ORGS, exact: true }),
    );
    return res.hits.map((h) => String(h.value)).sort();
  }

  async scroll(orgId: string, after: string | undefined, limit: number): Promise<EntryPage> {
    const res = await this.call('scroll', () =>
      this.client.scroll(this.collection, {
        filter: orgFilter(orgId),
        limit,
        ...(after !== undefined ? { offset: after } : {}),
        with_payload: ENTRY_FIELDS,
        with_vector: false,
      }),
    );
    const entries = res.points
      .map((p) => toEntry((p.payload ?? {}) as Partial<Payload>))
      .filter((e): e is StoredEntry => e !== undefined);
    const next = res.next_page_offset;
    return next === undefined || next === null ? { entries } : { entries, next: String(next) };
  }

  async close(): Promise<void> {
    // The REST client holds no resources beyond its keep-alive pool.
  }

  /**
   * Number of the organization's entries and, per query term, how many contain it:
   * exact counts over the tenant (so one organization's content never shifts another's
   * scores), cached briefly per organization.
   */
  private async termStats(
    orgId: string,
    terms: QueryTerm[],
  ): Promise<{ docCount: number; df: Map<string, number> }> {
    const now = Date.now();
    let cached = this.stats.get(orgId);
    if (!cached || now - cached.at > STATS_TTL_MS) {
      cached = { at: now, docCount: undefined, df: new Map() };
      if (this.stats.size >= STATS_CACHE_ORGS) this.stats.clear();
      this.stats.set(orgId, cached);
    }
    const entry = cached;
    const missing = terms.filter((t) => !entry.df.has(t.term));
    const [docCount] = await Promise.all([
      entry.docCount ?? this.count(orgId),
      ...missing.map(async (t) => {
        const { count } = await this.call('count', () =>
          this.client.count(this.collection, {
            filter: orgFilter(orgId, { key: 'terms', match: { value: t.term } }),
            exact: true,
          }),
        );
        entry.df.set(t.term, count);
      }),
    ]);
    entry.docCount = docCount;
    return { docCount, df: entry.df };
  }

  private assertWritable(): void {
    if (this.options.readOnly)
      throw new Error(`qdrant collection ${this.collection} is open read-only`);
  }

  /** Runs a Qdrant call; transport failures, timeouts, 429 and 5xx become service_unavailable. */
  private async call<T>(operation: string, fn: () => Promise<T>): Promise<T> {
    try {
      return await fn();
    } catch (err) {
      throw this.unavailable(operation, err);
    }
  }

  private unavailable(operation: string, err: unknown): AppError {
    const status = (err as { status?: unknown })?.status;
    const detail = (err as { data?: { status?: { error?: string } } })?.data?.status?.error;
    const message = err instanceof Error ? err.message : String(err);
    this.options.logger?.error(
      { operation, collection: this.collection, status, detail, err: message },
      'qdrant call failed',
    );
    if (
      typeof status === 'number' &&
      status >= 400 &&
      status < 500 &&
      status !== 408 &&
      status !== 429
    ) {
      // Our request was wrong: a bug, not an outage.
      return new AppError('internal_error', `qdrant rejected ${operation}`, { cause: err });
    }
    const timedOut = err instanceof QdrantClientTimeoutError;
    return new AppError(
      'service_unavailable',
      timedOut ? 'the vector index timed out' : 'the vector index is unavailable',
      {
        retryAfter: 1,
        cause: err,
      },
    );
  }
}

/** The collections of this prefix on a Qdrant server, for re-indexing. */
export class QdrantCatalog implements IndexCatalog {
  constructor(
    private readonly client: QdrantClient,
    private readonly prefix: string,
    private readonly logger?: Logger,
  ) {}

  async list(): Promise<string[]> {
    const res = await this.client.getCollections();
    return res.collections
      .map((c) => c.name)
      .filter((name) => isCollectionOf(this.prefix, name))
      .sort();
  }

  async openForRead(collection: string): Promise<KnowledgeIndex> {
    const info = await this.client.getCollection(collection);
    const vectors = info.config.params.vectors as Record<string, { size?: number }> | undefined;
    const dimensions = vectors?.[DENSE]?.size ?? 0;
    const index = new QdrantIndex({
      client: this.client,
      collection,
      fingerprint: { provider: 'unknown', model: 'unknown', dimensions },
      logger: this.logger,
      readOnly: true,
    });
    await index.init();
    return index;
  }

  async drop(collection: string): Promise<void> {
    if (!isCollectionOf(this.prefix, collection))
      throw new Error(`not a collection of prefix ${this.prefix}: ${collection}`);
    await this.client.deleteCollection(collection);
  }
}
