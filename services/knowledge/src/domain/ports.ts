/**
 * The two ports of the knowledge service: an embedding provider and a vector
 * index. Each has a real adapter (OpenAI-compatible API, Qdrant) and a built-in
 * one (hashed embeddings, embedded index) with the same behaviour.
 */
import type { QuestionTerms } from './question-vocabulary.js';

/** What makes two vectors comparable: never mix vectors with different fingerprints. */
export interface Fingerprint {
  provider: string;
  model: string;
  dimensions: number;
}

/** The text of an entry that gets embedded and indexed. */
export interface EntryText {
  question: string;
  answer: string;
  tags: string[];
}

export interface EmbeddingProvider {
  readonly fingerprint: Fingerprint;
  /**
   * Typical cosine similarity of unrelated texts and of a text with itself for this
   * model; scoring maps cosine onto [0,1] with it so scores mean the same across models.
   */
  readonly cosineRange: { unrelated: number; identical: number };
  /** One L2-normalised vector per entry, in order. */
  embedDocuments(entries: EntryText[]): Promise<Float32Array[]>;
  /** An L2-normalised vector for a search query. */
  embedQuery(text: string): Promise<Float32Array>;
  /** L2-normalised vectors for plain texts, in order (the EmbeddingsService RPC). */
  embedTexts(texts: string[]): Promise<Float32Array[]>;
}

/** Sparse vector with unique indices in ascending order. */
export interface SparseVector {
  indices: ArrayLike<number>;
  values: ArrayLike<number>;
}

/** An entry as stored: its source text is kept so it can be re-embedded. */
export interface StoredEntry extends EntryText {
  id: string;
  /** Milliseconds since the epoch of the last write. */
  updatedAt: number;
  /** sha256 of the entry text; an unchanged entry is not re-embedded. */
  contentHash: string;
}

/** An entry ready to be written: text plus both vectors and its distinct index terms. */
export interface IndexedEntry extends StoredEntry {
  dense: Float32Array;
  sparse: SparseVector;
  /** Distinct terms of the entry (for per-organization document frequencies). */
  terms: string[];
}

/** A distinct term of a query. */
export interface QueryTerm {
  term: string;
  id: number;
  /** Occurrences in the query. */
  count: number;
}

export interface CandidateQuery {
  orgId: string;
  /** Null when no query embedding is available (provider down): lexical candidates only. */
  dense: Float32Array | null;
  terms: QueryTerm[];
  /** How many candidates to return at most. */
  limit: number;
}

/** A candidate as an object: made only for those the reranker reads or search returns. */
export interface Candidate {
  entry: StoredEntry;
  /**
   * Cosine of the entry's dense vector with the query's; null when the query has no vector.
   * The embedded index sums Σ query[j]·entry[j] in ascending j in doubles (as `dot` here);
   * Qdrant computes it itself, in float32 (within 1e-6).
   */
  cosine: number | null;
  /**
   * What the reranker reads of the entry's text, when the index keeps it per entry; without
   * it the reranker derives it from the entry's text (entry-profile.ts).
   */
  profile?: EntryProfile;
}

/** What the reranker reads of an entry's text besides its vectors (entry-profile.ts). */
export interface EntryProfile {
  /** Identifies the entry's question: answers to one question share it. */
  questionKey: number;
  /** Distinct terms of the question text (question and tags), in order of first occurrence. */
  questionTerms: QuestionTerms;
  /** Σ count² of the character trigrams of the question's terms. */
  questionGramNorm2: number;
  /** True when the entry's answer holds the term: the query's term at `index` of its terms. */
  inAnswer(term: QueryTerm, index: number): boolean;
}

/**
 * The candidates of one query as columns, candidate k = 0 … size − 1, each entry at most once,
 * plus the organization's statistics that lexical scoring needs. The first stage scores every
 * candidate from these arrays; objects (`candidate(k)`) are made only for the few it passes
 * on to the reranker.
 */
export interface CandidateSet {
  /** Entries in the organization. */
  docCount: number;
  /** Entries of the organization containing each query term, by term id. */
  documentFrequency: Map<number, number>;
  size: number;
  /**
   * bm25[k]: candidate k's BM25 for the query, all that lexical scoring reads: Σ over the
   * query's terms, in their order, of count × IDF × the entry's sparse weight for the term (0
   * when its entry lacks the term), in doubles (scoring.ts, bm25Score).
   */
  bm25: Float64Array;
  /** cosines[k]: as Candidate.cosine; null when the query has no vector. */
  cosines: Float64Array | null;
  /** The entry id of candidate k. */
  idOf(k: number): string;
  /** Candidate k as an object (its entry's text is read when first asked for). */
  candidate(k: number): Candidate;
}

export type WriteOutcome = 'inserted' | 'updated';

export interface EntryVersion {
  contentHash: string;
  updatedAt: number;
}

export interface EntryPage {
  entries: StoredEntry[];
  /** Pass as `after` for the next page; absent on the last page. */
  next?: string;
}

/**
 * One collection of indexed entries, all scoped by organization: no method ever
 * reads or writes another organization's entries.
 */
export interface KnowledgeIndex {
  /** Collection name; it carries the embedding fingerprint. */
  readonly collection: string;
  /** Creates the collection and its indexes if missing (idempotent). */
  init(): Promise<void>;
  /** Writes entries (replacing same-id ones); says for each whether it was new. */
  upsert(orgId: string, entries: IndexedEntry[]): Promise<WriteOutcome[]>;
  /** Content hash and write time of those of `ids` that exist. */
  versions(orgId: string, ids: string[]): Promise<Map<string, EntryVersion>>;
  /** Deletes the given entries; returns how many existed. */
  delete(orgId: string, ids: string[]): Promise<number>;
  count(orgId: string): Promise<number>;
  /** Hybrid candidates: best lexical and best dense matches, with their cosines and term weights. */
  candidates(query: CandidateQuery): Promise<CandidateSet>;
  /** Organizations with at least one entry (re-indexing walks them). */
  listOrgs(): Promise<string[]>;
  /** An organization's entries in a stable order, `limit` at a time. */
  scroll(orgId: string, after: string | undefined, limit: number): Promise<EntryPage>;
  close(): Promise<void>;
}

/** The collections of one backend that share a prefix, for re-indexing. */
export interface IndexCatalog {
  /** Names of existing collections with this deployment's prefix. */
  list(): Promise<string[]>;
  /** Opens an existing collection to read it (any fingerprint). */
  openForRead(collection: string): Promise<KnowledgeIndex>;
  drop(collection: string): Promise<void>;
}
