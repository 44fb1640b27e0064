import { readFileSync } from 'node:fs';
import type { Judgements } from './retrieval-metrics.js';

/**
 * Loader of an FAQ-retrieval test collection in JSON Lines (the StackFAQ layout):
 * corpus {faq_id, thread_id, question, answer}, queries {query_id, thread_id, text},
 * qrels {query_id, faq_id, relevance}. Evaluation data is read from where it lies;
 * nothing of it is copied into the product.
 */
export interface CorpusEntry {
  faq_id: string;
  thread_id: string;
  question: string;
  answer: string;
}

export interface EvalQuery {
  query_id: string;
  thread_id: string;
  text: string;
}

export interface EvalCollection {
  corpus: CorpusEntry[];
  queries: EvalQuery[];
  judgements: Judgements;
}

export function readJsonl<T>(path: string): T[] {
  return readFileSync(path, 'utf8')
    .split('\n')
    .filter((line) => line.trim().length > 0)
    .map((line) => JSON.parse(line) as T);
}

export function loadEvalCollection(
  corpusPath: string,
  queriesPath: string,
  qrelsPath: string,
): EvalCollection {
  const corpus = readJsonl<CorpusEntry>(corpusPath);
  const queries = readJsonl<EvalQuery>(queriesPath).filter(
    (q) => typeof q.text === 'string' && q.text.trim().length > 0,
  );
  const relevant = new Map<string, Set<string>>();
  for (const r of readJsonl<{ query_id: string; faq_id: string; relevance?: number }>(qrelsPath)) {
    if ((r.relevance ?? 1) <= 0) continue;
    let set = relevant.get(r.query_id);
    if (!set) relevant.set(r.query_id, (set = new Set()));
    set.add(r.faq_id);
  }
  const threadOf = new Map(corpus.map((c) => [c.faq_id, c.thread_id]));
  return { corpus, queries, judgements: { relevant, threadOf } };
}
