import { mapConcurrently, type Logger } from '@support-agent/shared';
import { clusterTopics, dot, KB_EVIDENCE_WEIGHT } from './cluster-topics.js';
import { groupAnchor, kbCandidates, type AnchoredTopic } from './kb-anchoring.js';
import type { Embedder, KbHit, KnowledgeSearch, WeekTicket } from './ports.js';
import { oneLine, questionKey, truncate } from './text.js';
import type { IdentityDraft } from './week-over-week.js';

/** Distinct question texts of the week (identical ones asked by several tickets count once, with weight). */
export interface Question {
  text: string;
  tickets: WeekTicket[];
}

export interface GroupedTopic {
  /** The KB topic it is anchored on; undefined for a cluster of unanswered questions. */
  anchor: AnchoredTopic | undefined;
  questions: Question[];
  /** The most central question of the group. */
  central: Question;
  /** Tickets in the topic. */
  size: number;
  /** Unit-length weighted mean of the members' embeddings (matches topics across weeks). */
  centroid: Float64Array;
}

export interface WeekTopics {
  topics: GroupedTopic[];
  /** False when the knowledge service could not be searched. */
  kbChecked: boolean;
  /** The vector space of the centroids, e.g. `hashed/hashed-v1/512`. */
  fingerprint: string;
  /** Clustering threshold used. */
  threshold: number;
  /** Centroid cosine at which an unanswered topic matches one of last week's (week-over-week.ts). */
  matchThreshold: number;
}

export interface TopicThresholds {
  /** Used for every vector space when set (DIGEST_TOPIC_THRESHOLD). */
  override: number | undefined;
  /** The built-in lexical embeddings of this service. */
  lexical: number;
  /** knowledge's hashed embeddings (fingerprint `hashed/…`). */
  hashed: number;
  /** Any learned dense model (OpenAI-compatible embeddings). */
  dense: number;
}

export interface GroupingSettings {
  /** Evidence a topic needs to be shown with a KB answer (DIGEST_KB_SCORE_FLOOR). */
  kbScoreFloor: number;
  /** Hits per question taken as KB candidates. */
  searchDepth: number;
  thresholds: TopicThresholds;
  /** KB searches in flight at once. */
  searchConcurrency: number;
}

export interface GroupingDeps {
  embedder: Embedder;
  knowledge: KnowledgeSearch;
  logger: Logger;
}

/**
 * Cosine of two unanswered topics' mean embeddings (this week's, last week's) at which they are
 * taken for the same question, never above the clustering threshold. With knowledge's hashed
 * embeddings, two disjoint sets of paraphrases of one StackFAQ dev question are at 0.4 or more
 * 88 % of the time, paraphrase sets of two different questions 2.5 % of the time; matches are
 * one to one, most similar first.
 */
export const UNANSWERED_MATCH_COSINE = 0.4;
const EMBED_TEXT_MAX = 500;
const EXAMPLES_PER_TOPIC = 2;
const QUERY_MAX = 2_000;

/**
 * A week's tickets as topics: each distinct question searched in the KB and embedded, all
 * of them clustered by their text and by the KB answers they share (cluster-topics.ts),
 * each cluster anchored on the KB topic its questions agree on (kb-anchoring.ts).
 * Clusters anchored on the same KB question are one topic.
 */
export async function groupWeek(
  deps: GroupingDeps,
  settings: GroupingSettings,
  orgId: string,
  tickets: WeekTicket[],
): Promise<WeekTopics> {
  const questions = distinctQuestions(tickets);
  const { vectors, fingerprint } =
    questions.length > 0
      ? await deps.embedder.embed(questions.map((q) => truncate(q.text, EMBED_TEXT_MAX)))
      : { vectors: [], fingerprint: 'none' };
  const threshold = thresholdFor(fingerprint, settings.thresholds);
  const matchThreshold = Math.min(threshold, UNANSWERED_MATCH_COSINE);
  if (questions.length === 0)
    return { topics: [], kbChecked: true, fingerprint, threshold, matchThreshold };

  const hits = await searchQuestions(deps, settings, orgId, questions);
  const kbChecked = hits !== undefined;
  const kb = kbCandidates(questions.map((_, i) => hits?.[i]));
  const weights = questions.map((q) => q.tickets.length);
  const clustered = await clusterTopics(
    questions.map((_, i) => ({ vector: vectors[i]!, profile: kb.scores[i]!, weight: weights[i]! })),
    { threshold, kbWeight: kbChecked ? KB_EVIDENCE_WEIGHT : 0 },
  );

  // Each cluster is shown with the KB answer its questions agree on, when they agree enough.
  const autoAnswered = questions.map((q) => q.tickets.some((t) => t.answered));
  const byKey = new Map<string, number[]>();
  const unanswered: number[][] = [];
  for (const t of clustered) {
    const key = kbChecked
      ? groupAnchor(t.members, kb.scores, weights, autoAnswered, settings.kbScoreFloor)
      : undefined;
    if (key === undefined) unanswered.push(t.members);
    else byKey.set(key, [...(byKey.get(key) ?? []), ...t.members]);
  }
  deps.logger.debug(
    {
      fingerprint,
      threshold,
      questions: questions.length,
      clusters: clustered.length,
      anchored: byKey.size,
      unanswered: unanswered.length,
    },
    'topics grouped',
  );

  const topic = (anchor: AnchoredTopic | undefined, members: number[]): GroupedTopic => {
    const sorted = [...members].sort((a, b) => a - b);
    const centroid = meanUnit(
      sorted.map((i) => vectors[i]!),
      sorted.map((i) => weights[i]!),
    );
    return {
      anchor: anchor && { ...anchor, members: sorted },
      questions: sorted.map((i) => questions[i]!),
      central: questions[mostCentral(sorted, vectors, centroid, questions)]!,
      size: sorted.reduce((n, i) => n + weights[i]!, 0),
      centroid,
    };
  };
  const topics = [
    ...[...byKey].map(([key, members]) => topic(kb.topicOf(key, members), members)),
    ...unanswered.map((m) => topic(undefined, m)),
  ].sort(
    (a, b) =>
      b.size - a.size ||
      compareText(titleOf(a), titleOf(b)) ||
      a.questions[0]!.tickets[0]!.ticketId - b.questions[0]!.tickets[0]!.ticketId,
  );
  return { topics, kbChecked, fingerprint, threshold, matchThreshold };
}

export function titleOf(t: GroupedTopic): string {
  return t.anchor ? oneLine(t.anchor.question) : t.central.text;
}

export function ticketsOf(t: GroupedTopic): WeekTicket[] {
  return t.questions.flatMap((q) => q.tickets);
}

/** The most asked phrasings other than the title. */
export function examplesOf(t: GroupedTopic): string[] {
  const title = questionKey(titleOf(t));
  return t.questions
    .filter((q) => questionKey(q.text) !== title)
    .sort((a, b) => b.tickets.length - a.tickets.length)
    .slice(0, EXAMPLES_PER_TOPIC)
    .map((q) => q.text);
}

/** What identifies a topic across weeks (week-over-week.ts). */
export function identityOf(t: GroupedTopic): IdentityDraft {
  return {
    kbKey: t.anchor?.key,
    kbEntryId: t.anchor?.canonicalEntryId,
    title: titleOf(t),
    centroid: t.anchor ? undefined : t.centroid,
  };
}

/** Threshold for a vector space: the override, else by the provider part of the fingerprint. */
export function thresholdFor(fingerprint: string, t: TopicThresholds): number {
  if (t.override !== undefined) return t.override;
  const provider = fingerprint.split('/')[0] ?? '';
  if (provider === 'builtin') return t.lexical;
  if (provider.startsWith('hashed')) return t.hashed;
  return t.dense;
}

function distinctQuestions(tickets: WeekTicket[]): Question[] {
  const byKey = new Map<string, Question>();
  for (const t of tickets) {
    const text = oneLine(t.content);
    if (!text) continue;
    const key = questionKey(text);
    const q = byKey.get(key);
    if (q) q.tickets.push(t);
    else byKey.set(key, { text, tickets: [t] });
  }
  return [...byKey.values()];
}

/**
 * Every question's KB hits, or undefined when the knowledge service failed: after the
 * first failure nothing more is asked (a service that is down or slow would otherwise
 * cost one deadline per question) and the week is grouped without the KB.
 */
async function searchQuestions(
  deps: GroupingDeps,
  settings: GroupingSettings,
  orgId: string,
  questions: Question[],
): Promise<KbHit[][] | undefined> {
  const out: KbHit[][] = new Array<KbHit[]>(questions.length);
  let failed = false;
  await mapConcurrently(questions, settings.searchConcurrency, async (question, i) => {
    if (failed) return;
    try {
      out[i] = await deps.knowledge.search(
        orgId,
        truncate(question.text, QUERY_MAX),
        settings.searchDepth,
      );
    } catch (err) {
      if (!failed)
        deps.logger.warn(
          { err: (err as Error).message, orgId },
          'knowledge search failed while building a digest',
        );
      failed = true;
    }
  });
  return failed ? undefined : out;
}

/** The member closest to the centroid; the shortest text, then the first in order, on ties. */
function mostCentral(
  members: number[],
  vectors: ArrayLike<number>[],
  centroid: Float64Array,
  questions: Question[],
): number {
  let best = members[0]!;
  let bestSim = -Infinity;
  for (const m of members) {
    const v = unit(Float64Array.from(vectors[m]!));
    const s = dot(v, centroid);
    const shorter = [...questions[m]!.text].length < [...questions[best]!.text].length;
    if (s > bestSim + 1e-9 || (Math.abs(s - bestSim) <= 1e-9 && shorter)) {
      best = m;
      bestSim = Math.max(s, bestSim);
    }
  }
  return best;
}

function compareText(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

function meanUnit(vectors: ArrayLike<number>[], weights: number[]): Float64Array {
  const dims = vectors[0]?.length ?? 0;
  const sum = new Float64Array(dims);
  vectors.forEach((v, i) => {
    let norm = 0;
    for (let d = 0; d < dims; d++) norm += v[d]! * v[d]!;
    const scale = norm > 0 ? weights[i]! / Math.sqrt(norm) : 0;
    for (let d = 0; d < dims; d++) sum[d]! += scale * v[d]!;
  });
  return unit(sum);
}

export function unit(v: Float64Array): Float64Array {
  let norm = 0;
  for (let d = 0; d < v.length; d++) norm += v[d]! * v[d]!;
  if (norm === 0) return v;
  const inv = 1 / Math.sqrt(norm);
  return v.map((x) => x * inv);
}
