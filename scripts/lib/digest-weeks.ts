// Weeks of tickets drawn from an evaluation collection (each thread = one question) and the
// scores of a digest's grouping of them: shared by eval-digest.ts (through the pipeline) and
// eval-digest-folds.ts (in process, thresholds chosen by cross-validation over threads).
import { join } from 'node:path';
import { mulberry32 } from '@support-agent/shared';
import { readJsonl, type CorpusEntry, type EvalQuery } from '@support-agent/quality';

export const MAX_TICKETS_PER_QUESTION = 10;

/** The topics of a digest's structured form, as far as scoring needs them. */
export interface DigestTopic {
  id: string;
  title: string;
  answered: boolean;
  tickets: number;
  answer: { kind: string; kb_entry_id: string | null } | null;
  ticket_ids: number[];
}

export interface WeekResult {
  questions: number;
  tickets: number;
  topics: number;
  /** Most topics the tickets of one question were spread over. */
  worstSplit: number;
  precision: number;
  recall: number;
  f1: number;
  /** Share of the answerable questions' tickets in a topic shown with a KB answer… */
  withKbAnswer: number;
  /** …and with the answer of their own question. */
  withOwnAnswer: number;
  /** Share of the tickets of questions removed from the KB that sit in unanswered topics. */
  gapsUnanswered: number | undefined;
  /** Share of the tickets triage answered automatically, and the build time (pipeline only). */
  autoAnswered?: number;
  buildMs?: number;
}

export function shuffle<T>(items: T[], rnd: () => number): T[] {
  const a = [...items];
  for (let i = a.length - 1; i > 0; i--) {
    const j = Math.floor(rnd() * (i + 1));
    [a[i], a[j]] = [a[j]!, a[i]!];
  }
  return a;
}

/** A week: `questions` threads, each asked by 1–10 of its queries; and the threads left out of the KB. */
export function drawWeek(
  byThread: Map<string, EvalQuery[]>,
  seed: number,
  questions: number,
  gaps: number,
): { tickets: EvalQuery[]; removed: Set<string> } {
  const rnd = mulberry32(seed);
  const threads = shuffle([...byThread.keys()].sort(), rnd).slice(0, questions);
  const tickets: EvalQuery[] = [];
  for (const t of threads) {
    const size = 1 + Math.floor(rnd() * MAX_TICKETS_PER_QUESTION);
    tickets.push(...shuffle(byThread.get(t)!, rnd).slice(0, size));
  }
  return { tickets: shuffle(tickets, rnd), removed: new Set(threads.slice(0, gaps)) };
}

/** The collection's KB and its questions grouped by thread (empty texts skipped). */
export function readCollection(
  data: string,
  queries: string,
): { corpus: CorpusEntry[]; byThread: Map<string, EvalQuery[]> } {
  const corpus = readJsonl<CorpusEntry>(join(data, 'corpus.jsonl'));
  const byThread = new Map<string, EvalQuery[]>();
  for (const q of readJsonl<EvalQuery>(join(data, queries))) {
    if (!q.text?.trim()) continue;
    byThread.set(q.thread_id, [...(byThread.get(q.thread_id) ?? []), q]);
  }
  return { corpus, byThread };
}

export function scoreWeek(
  topics: DigestTopic[],
  threadOf: Map<number, string>,
  corpus: CorpusEntry[],
  removed: Set<string>,
): WeekResult {
  const entryThread = new Map(corpus.map((c) => [c.faq_id, c.thread_id]));
  const topicOf = new Map<number, DigestTopic>();
  for (const t of topics) for (const id of t.ticket_ids) topicOf.set(id, t);
  const ids = [...threadOf.keys()];
  if (ids.some((id) => !topicOf.has(id))) throw new Error('a ticket is in no topic');

  let tp = 0;
  let fp = 0;
  let fn = 0;
  for (let i = 0; i < ids.length; i++)
    for (let j = i + 1; j < ids.length; j++) {
      const sameThread = threadOf.get(ids[i]!) === threadOf.get(ids[j]!);
      const sameTopic = topicOf.get(ids[i]!) === topicOf.get(ids[j]!);
      if (sameThread && sameTopic) tp++;
      else if (sameTopic) fp++;
      else if (sameThread) fn++;
    }
  const precision = tp + fp > 0 ? tp / (tp + fp) : 1;
  const recall = tp + fn > 0 ? tp / (tp + fn) : 1;
  const threads = new Set(threadOf.values());
  const splits = [...threads].map(
    (th) => new Set(ids.filter((id) => threadOf.get(id) === th).map((id) => topicOf.get(id))).size,
  );
  const answerable = ids.filter((id) => !removed.has(threadOf.get(id)!));
  const gapTickets = ids.filter((id) => removed.has(threadOf.get(id)!));
  const kbEntry = (id: number) => {
    const t = topicOf.get(id)!;
    return t.answered && t.answer?.kind === 'kb' ? (t.answer.kb_entry_id ?? undefined) : undefined;
  };
  const share = (list: number[], ok: (id: number) => boolean) =>
    list.length === 0 ? 1 : list.filter(ok).length / list.length;
  return {
    questions: threads.size,
    tickets: ids.length,
    topics: topics.length,
    worstSplit: Math.max(...splits),
    precision,
    recall,
    f1: (2 * precision * recall) / (precision + recall || 1),
    withKbAnswer: share(answerable, (id) => kbEntry(id) !== undefined),
    withOwnAnswer: share(
      answerable,
      (id) => entryThread.get(kbEntry(id) ?? '') === threadOf.get(id),
    ),
    gapsUnanswered:
      gapTickets.length > 0 ? share(gapTickets, (id) => !topicOf.get(id)!.answered) : undefined,
  };
}

export function report(label: string, results: WeekResult[]): void {
  const mean = (f: (r: WeekResult) => number) =>
    results.reduce((s, r) => s + f(r), 0) / results.length;
  const min = (f: (r: WeekResult) => number) => Math.min(...results.map(f));
  const max = (f: (r: WeekResult) => number) => Math.max(...results.map(f));
  const tpq = (r: WeekResult) => r.topics / r.questions;
  const pct = (x: number) => `${(100 * x).toFixed(1)} %`;
  console.log(`\n${label}`);
  console.log(
    '| seed | questions | tickets | topics | topics/question | worst split | P | R | F1 | with KB answer | with own answer |' +
      (results[0]?.gapsUnanswered !== undefined ? ' gaps unanswered |' : ''),
  );
  console.log(
    '|---|---|---|---|---|---|---|---|---|---|---|' +
      (results[0]?.gapsUnanswered !== undefined ? '---|' : ''),
  );
  results.forEach((r, i) =>
    console.log(
      `| ${i + 1} | ${r.questions} | ${r.tickets} | ${r.topics} | ${tpq(r).toFixed(2)} | ${r.worstSplit} | ${r.precision.toFixed(3)} | ${r.recall.toFixed(3)} | ${r.f1.toFixed(3)} | ${pct(r.withKbAnswer)} | ${pct(r.withOwnAnswer)} |` +
        (r.gapsUnanswered !== undefined ? ` ${pct(r.gapsUnanswered)} |` : ''),
    ),
  );
  console.log(
    `| mean | | ${mean((r) => r.tickets).toFixed(1)} | ${mean((r) => r.topics).toFixed(1)} | ${mean(tpq).toFixed(2)} (worst ${max(tpq).toFixed(2)}) | ${max((r) => r.worstSplit)} | ${mean((r) => r.precision).toFixed(3)} | ${mean((r) => r.recall).toFixed(3)} | ${mean((r) => r.f1).toFixed(3)} (worst ${min((r) => r.f1).toFixed(3)}) | ${pct(mean((r) => r.withKbAnswer))} (worst ${pct(min((r) => r.withKbAnswer))}) | ${pct(mean((r) => r.withOwnAnswer))} (worst ${pct(min((r) => r.withOwnAnswer))}) |` +
      (results[0]?.gapsUnanswered !== undefined
        ? ` ${pct(mean((r) => r.gapsUnanswered ?? 0))} |`
        : ''),
  );
  if (results[0]?.buildMs !== undefined)
    console.log(
      `answered automatically by triage: ${pct(mean((r) => r.autoAnswered ?? 0))} of the tickets; digest build: mean ${mean((r) => r.buildMs ?? 0).toFixed(0)} ms`,
    );
}
