import { hash32, termId } from './hashing.js';
import type { EntryProfile, EntryText } from './ports.js';
import { gramCounts } from './term-grams.js';
import { QuestionVocabulary, questionTermsIn } from './question-vocabulary.js';
import { questionText } from './scoring.js';
import { terms } from './tokenizer.js';

/**
 * What the reranker reads of an entry's text (rerank.ts), derived once per entry: tokenising
 * the question and answer of every reranked candidate on every query was most of a search's
 * CPU. An index that keeps these per entry (the embedded one) saves it at query time; for the
 * others the profile is derived from the text the index returns.
 */

const KEY_SEED_A = 0x2545f491;
const KEY_SEED_B = 0x9e3779b9;

/**
 * Identifies a question text: equal questions share a key, different ones collide with a
 * probability of 2^-52 (two independent 32-bit hashes, 52 bits kept, exact in a double).
 */
export function questionKey(question: string): number {
  return hash32(question, KEY_SEED_A) * 2 ** 20 + (hash32(question, KEY_SEED_B) >>> 12);
}

/** An entry's profile facts that an index can store per entry. */
export interface EntryTextFacts {
  questionKey: number;
  /** Distinct terms of the question text (question and tags), in order of first occurrence. */
  questionTerms: string[];
  questionGramNorm2: number;
  /** Distinct terms of the answer. */
  answerTerms: Set<string>;
}

export function entryTextFacts(entry: EntryText): EntryTextFacts {
  const questionTerms = [...new Set(terms(questionText(entry)))];
  return {
    questionKey: questionKey(entry.question),
    questionTerms,
    questionGramNorm2: gramCounts(questionTerms).norm2,
    answerTerms: new Set(terms(entry.answer)),
  };
}

/** Terms beyond which the vocabulary of profiles derived from text starts afresh. */
const SHARED_VOCABULARY_CAP = 200_000;
let shared = new QuestionVocabulary();

/**
 * The vocabulary of question terms of profiles derived from text (indexes that keep none of
 * their own): one per process, so a query's lookups carry over from one candidate to the
 * next. Past the cap a new one starts; profiles made before keep the old one, whose ids stay
 * valid for them.
 */
export function sharedQuestionVocabulary(): QuestionVocabulary {
  if (shared.size >= SHARED_VOCABULARY_CAP) shared = new QuestionVocabulary();
  return shared;
}

/** The profile of an entry from its text (for indexes that keep none). */
export function profileFromText(entry: EntryText): EntryProfile {
  const facts = entryTextFacts(entry);
  return {
    questionKey: facts.questionKey,
    questionTerms: questionTermsIn(sharedQuestionVocabulary(), facts.questionTerms),
    questionGramNorm2: facts.questionGramNorm2,
    inAnswer: (t) => facts.answerTerms.has(t.term),
  };
}

/** The sparse-vector dimensions of an answer's terms (what an index flags in its postings). */
export function answerTermIds(facts: EntryTextFacts): Set<number> {
  const ids = new Set<number>();
  for (const t of facts.answerTerms) ids.add(termId(t));
  return ids;
}
