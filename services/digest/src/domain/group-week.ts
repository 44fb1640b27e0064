import type { Logger } from '@support-agent/shared';
import { clusterTopics, dot, type SeedGroup } from './cluster-topics.js';
import {
  anchorQuestions,
  groupAnchor,
  SUPPORTED_MATCH_SHARE,
  type AnchoredTopic,
} from './kb-anchoring.js';
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
  /** Clustering threshold used (also the bar for matching last week's unanswered topics). */
  threshold: number;
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
  /** A KB hit at or above this score anchors its topic (DIGEST_KB_SCORE_FLOOR). */
  kbScoreFloor: number;
  /** Hits per question taken as KB candidates. */
  searchDepth: number;
  /** Temperature of the week prior's likelihoods, in score units. */
  anchorTemperature: number;
  /** Share of the KB hit-profile similarity in the clustering similarity. */
  profileWeight: number;
  thresholds: TopicThresholds;
  /** KB searches in flight at once. */
  searchConcurrency: number;
}

export interface GroupingDeps {
  embedder: Embedder;
  knowledge: KnowledgeSearch;
  logger: Logger;
}

const EMBED_TEXT_MAX = 500;
const EXAMPLES_PER_TOPIC = 2;
const QUERY_MAX = 2_000;

/**
 * A week's tickets as topics: each distinct question searched in the KB, anchored on
 * the KB entry it (and its paraphrases) confidently match (kb-anchoring.ts), the rest
 * clustered among themselves and with the anchored topics (cluster-topics.ts).
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
  if (questions.length === 0) return { topics: [], kbChecked: true, fingerprint, threshold };

  const hits = await searchQuestions(deps, settings, orgId, questions);
  const kbChecked = hits !== undefined;
  const anchoring = anchorQuestions(
    questions.map((q, i) => ({
      weight: q.tickets.length,
      autoAnswered: q.tickets.some((t) => t.answered),
      hits: hits?.[i],
    })),
    { floor: settings.kbScoreFloor, temperature: settings.anchorTemperature },
  );
  const seeds: SeedGroup[] = [
    ...anchoring.anchored.map((a) => ({ members: a.members, anchored: true })),
    ...anchoring.leftovers.map((i) => ({ members: [i], anchored: false })),
  ];
  const clustered = await clusterTopics(
    questions.map((q, i) => ({
      vector: vectors[i]!,
      profile: evidenceProfile(anchoring.candidates[i]!, settings.kbScoreFloor),
      weight: q.tickets.length,
    })),
    seeds,
    { threshold, profileWeight: kbChecked ? settings.profileWeight : 0 },
  );
  deps.logger.debug(
    {
      fingerprint,
      threshold,
      questions: questions.length,
      anchored: anchoring.anchored.length,
      leftovers: anchoring.leftovers.length,
      topics: clustered.length,
    },
    'topics grouped',
  );

  // A cluster of questions that were not confident alone may be together: anchored on the KB
  // topic their combined evidence reaches the floor for (joining it if it is already a topic).
  const byKey = new Map<string, { anchor: AnchoredTopic; members: number[] }>();
  const unanswered: number[][] = [];
  for (const t of clustered) {
    const seeded = t.seed !== undefined ? anchoring.anchored[t.seed] : undefined;
    const key =
      seeded?.key ??
      (kbChecked ? groupAnchor(t.members, anchoring.candidates, settings.kbScoreFloor) : undefined);
    const known = key !== undefined ? byKey.get(key) : undefined;
    if (key === undefined) unanswered.push(t.members);
    else if (known) known.members.push(...t.members);
    else
      byKey.set(key, {
        anchor: seeded ?? anchoring.topicOf(key, t.members)!,
        members: [...t.members],
      });
  }
  const topic = (anchor: AnchoredTopic | undefined, members: number[]): GroupedTopic => {
    const sorted = [...members].sort((a, b) => a - b);
    const weights = sorted.map((i) => questions[i]!.tickets.length);
    const centroid = meanUnit(
      sorted.map((i) => vectors[i]!),
      weights,
    );
    return {
      anchor: anchor && { ...anchor, members: sorted },
      questions: sorted.map((i) => questions[i]!),
      central: questions[mostCentral(sorted, vectors, centroid, questions)]!,
      size: weights.reduce((a, b) => a + b, 0),
      centroid,
    };
  };
  const topics = [
    ...[...byKey.values()].map((g) => topic(g.anchor, g.members)),
    ...unanswered.map((m) => topic(undefined, m)),
  ].sort(
    (a, b) =>
      b.size - a.size ||
      compareText(titleOf(a), titleOf(b)) ||
      a.questions[0]!.tickets[0]!.ticketId - b.questions[0]!.tickets[0]!.ticketId,
  );
  return { topics, kbChecked, fingerprint, threshold };
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
  await mapLimit(questions.length, settings.searchConcurrency, async (i) => {
    if (failed) return;
    try {
      out[i] = await deps.knowledge.search(
        orgId,
        truncate(questions[i]!.text, QUERY_MAX),
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

export async function mapLimit(
  count: number,
  limit: number,
  fn: (index: number) => Promise<void>,
): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < count) await fn(next++);
  };
  await Promise.all(Array.from({ length: Math.max(1, Math.min(limit, count)) }, worker));
}

/**
 * The KB hits that count as evidence when comparing two questions: those strong enough to
 * join a confirmed topic. Search scores are calibrated probabilities, so an unrelated
 * question still gets every entry of a small KB at a low, near-uniform score; compared as
 * unit vectors those flat profiles would look alike and pull it into the biggest topic.
 */
function evidenceProfile(candidates: Map<string, number>, floor: number): Map<string, number> {
  const min = floor * SUPPORTED_MATCH_SHARE;
  return new Map([...candidates].filter(([, score]) => score >= min));
}
