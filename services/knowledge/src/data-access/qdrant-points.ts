import type { Schemas } from '@qdrant/js-client-rest';
import { entryTextFacts, questionKey, sharedQuestionVocabulary } from '../domain/entry-profile.js';
import type { CandidateWithVector } from '../domain/candidate-set.js';
import type { EntryProfile, IndexedEntry, StoredEntry } from '../domain/ports.js';
import { gramCounts } from '../domain/term-grams.js';
import { questionTermsIn } from '../domain/question-vocabulary.js';

/** The Qdrant adapter's points: named vectors, payload, and what a search reads back. */

export const DENSE = 'dense';
export const SPARSE = 'sparse';

/** Payload fields of a stored entry. */
export const ENTRY_FIELDS = [
  'entry_id',
  'question',
  'answer',
  'tags',
  'updated_at',
  'content_hash',
];
/** And what the reranker reads of a candidate besides its text (entry-profile.ts). */
export const CANDIDATE_FIELDS = [...ENTRY_FIELDS, 'question_terms', 'answer_terms'];

export interface Payload {
  org_id: string;
  entry_id: string;
  question: string;
  answer: string;
  tags: string[];
  updated_at: number;
  content_hash: string;
  /** Distinct index terms, for per-organization document frequencies. */
  terms: string[];
  /**
   * Distinct terms of the question text (question and tags) and of the answer: what the
   * reranker would otherwise tokenise for every reranked candidate of every query. Points
   * written before these fields existed are profiled from their text.
   */
  question_terms?: string[];
  answer_terms?: string[];
  /** provider/model/dimensions of the dense vector. */
  embedding: string;
}

export function toPayload(orgId: string, e: IndexedEntry, embedding: string): Payload {
  const facts = entryTextFacts(e);
  return {
    org_id: orgId,
    entry_id: e.id,
    question: e.question,
    answer: e.answer,
    tags: e.tags,
    updated_at: e.updatedAt,
    content_hash: e.contentHash,
    terms: e.terms,
    question_terms: facts.questionTerms,
    answer_terms: [...facts.answerTerms],
    embedding,
  };
}

export function toEntry(payload: Partial<Payload>): StoredEntry | undefined {
  if (
    typeof payload.entry_id !== 'string' ||
    typeof payload.question !== 'string' ||
    typeof payload.answer !== 'string'
  ) {
    return undefined;
  }
  return {
    id: payload.entry_id,
    question: payload.question,
    answer: payload.answer,
    tags: Array.isArray(payload.tags) ? payload.tags.map(String) : [],
    updatedAt: Number(payload.updated_at ?? 0),
    contentHash: String(payload.content_hash ?? ''),
  };
}

/**
 * A search hit as a candidate: its cosine with the query (the point's score, when the query
 * was ranked by the dense vector last), the sparse vector as Qdrant returns it, and the
 * stored profile, derived only if the reranker reads it (20 of ≈ 100 candidates).
 */
export function toCandidate(
  point: Schemas['ScoredPoint'],
  hasDenseQuery: boolean,
): CandidateWithVector | undefined {
  const payload = (point.payload ?? {}) as Partial<Payload>;
  const entry = toEntry(payload);
  const vectors = point.vector as Record<string, unknown> | null | undefined;
  const sparse = vectors?.[SPARSE] as { indices?: number[]; values?: number[] } | undefined;
  if (!entry) return undefined;
  let profile: EntryProfile | undefined | null = null;
  return {
    entry,
    cosine: hasDenseQuery ? point.score : null,
    sparse: { indices: sparse?.indices ?? [], values: sparse?.values ?? [] },
    get profile() {
      if (profile === null) profile = storedProfile(entry, payload);
      return profile;
    },
  };
}

/** The reranker's profile from the payload's term lists, when the point has them. */
function storedProfile(entry: StoredEntry, payload: Partial<Payload>): EntryProfile | undefined {
  const { question_terms: question, answer_terms: answer } = payload;
  if (!isStrings(question) || !isStrings(answer)) return undefined;
  const inAnswer = new Set(answer);
  return {
    questionKey: questionKey(entry.question),
    questionTerms: questionTermsIn(sharedQuestionVocabulary(), question),
    questionGramNorm2: gramCounts(question).norm2,
    inAnswer: (t) => inAnswer.has(t.term),
  };
}

const isStrings = (x: unknown): x is string[] =>
  Array.isArray(x) && x.every((v) => typeof v === 'string');
