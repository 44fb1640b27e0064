import type { KbHit } from './ports.js';
import { questionKey } from './text.js';

/**
 * What the KB says about a week's questions, and which KB topic a group of them is about.
 *
 * Candidates: each question's KB hits collapsed by KB question (entries that share a
 * question are one topic, e.g. several answers to one FAQ), each scored by its best hit.
 * knowledge's scores are calibrated probabilities that the entry answers the query, so
 * Σ_c s(q,c)·s(q',c) is the probability that two questions are answered by the same KB
 * topic: the clustering uses it as evidence (cluster-topics.ts).
 *
 * Anchor of a topic (a cluster of questions): the candidate with the highest mean score
 * over its tickets, i.e. the expected share of them it answers. The topic is shown with
 * that KB answer when the share reaches the floor (DIGEST_KB_SCORE_FLOOR, ½: more likely
 * than not), or when triage answered one of its tickets automatically (answers' own
 * confidence judged the KB sufficient); otherwise it is unanswered: a KB article is missing.
 */
export interface AnchoredTopic {
  /** questionKey of the KB question. */
  key: string;
  /** The topic's KB question, as the KB spells it. */
  question: string;
  /** The entry of that question best matched this week (its answer is shown). */
  best: KbHit;
  /** The smallest entry id of the question seen this week (the topic's stable id). */
  canonicalEntryId: string;
  /** Question indexes, ascending. */
  members: number[];
}

export interface KbCandidates {
  /** Per question: score of each candidate KB topic (by key). */
  scores: Array<Map<string, number>>;
  /** The KB topic of a key any question retrieved, with the given members. */
  topicOf(key: string, members: number[]): AnchoredTopic | undefined;
}

export function kbCandidates(hits: Array<KbHit[] | undefined>): KbCandidates {
  const entries = new Map<string, KbTopicEntries>();
  const scores = hits.map((list) => {
    const byKey = new Map<string, number>();
    for (const hit of list ?? []) {
      const key = questionKey(hit.question);
      if (!byKey.has(key)) byKey.set(key, hit.score);
      const known = entries.get(key);
      if (!known) entries.set(key, { question: hit.question, best: hit, minId: hit.entryId });
      else {
        if (hit.score > known.best.score) known.best = hit;
        if (hit.entryId < known.minId) known.minId = hit.entryId;
      }
    }
    return byKey;
  });
  return {
    scores,
    topicOf: (key, members) => {
      const e = entries.get(key);
      if (!e) return undefined;
      const sorted = [...members].sort((a, b) => a - b);
      return {
        key,
        question: e.question,
        best: e.best,
        canonicalEntryId: e.minId,
        members: sorted,
      };
    },
  };
}

/**
 * The KB topic a group of questions is about: the candidate with the highest mean score
 * over the group's tickets (a question that did not retrieve it counts 0; ties: the smaller
 * key), which is the expected share of the group's tickets it answers. It is the group's
 * topic when that share reaches the floor, or when triage answered one of the group's
 * tickets automatically and that ticket's question retrieved it too.
 */
export function groupAnchor(
  members: number[],
  scores: Array<Map<string, number>>,
  weights: number[],
  autoAnswered: boolean[],
  floor: number,
): string | undefined {
  const sums = new Map<string, number>();
  let total = 0;
  for (const i of members) {
    total += weights[i]!;
    for (const [key, s] of scores[i]!) sums.set(key, (sums.get(key) ?? 0) + weights[i]! * s);
  }
  let best: string | undefined;
  let bestSum = -1;
  for (const [key, sum] of [...sums].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) {
    if (sum > bestSum + 1e-12) {
      best = key;
      bestSum = sum;
    }
  }
  if (best === undefined || total <= 0) return undefined;
  const confirmed = members.some((i) => autoAnswered[i] && scores[i]!.has(best!));
  return confirmed || bestSum / total >= floor - 1e-12 ? best : undefined;
}

interface KbTopicEntries {
  question: string;
  best: KbHit;
  minId: string;
}
