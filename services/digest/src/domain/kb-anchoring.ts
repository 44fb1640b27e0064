import type { KbHit } from './ports.js';
import { questionKey } from './text.js';

/**
 * Anchors a week's questions on the KB entries that answer them, so one question
 * asked many ways becomes one topic titled by its KB question.
 *
 * 1. Candidates: each question's KB hits, collapsed by KB question (entries that share
 *    a question are one topic), each scored by its best hit.
 * 2. Week prior: a question's anchor is chosen among its candidates with the week's
 *    other questions as evidence: a mixture model whose weights are fitted by EM
 *    (r(q,c) ∝ π_c · exp(score(q,c) / T), π_c = Σ_q tickets(q) · r(q,c)), so a paraphrase
 *    whose best hit is off by a little joins the entry its siblings clearly match.
 * 3. Confidence: the questions anchored on a KB topic are evidence that it answers them;
 *    the topic is confirmed when 1 − Π(1 − score) over its distinct questions reaches the
 *    floor (DIGEST_KB_SCORE_FLOOR), or triage answered one of its tickets automatically
 *    (answers' own confidence judged the KB sufficient). A question joins a confirmed topic
 *    when its own match reaches half the floor. Everything else is left to the clustering
 *    of unanswered questions, whose clusters are judged the same way (groupAnchor).
 */
export interface AnchorQuestion {
  /** Tickets that asked it. */
  weight: number;
  /** One of its tickets got an automatic high-confidence answer from triage. */
  autoAnswered: boolean;
  /** Its KB hits best first; undefined when the KB could not be searched. */
  hits: KbHit[] | undefined;
}

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

export interface Anchoring {
  /** Per question: score of each candidate KB topic (by key). */
  candidates: Array<Map<string, number>>;
  anchored: AnchoredTopic[];
  /** Questions with no confident anchor, ascending. */
  leftovers: number[];
  /** The KB topic of a key any question retrieved, with the given members. */
  topicOf(key: string, members: number[]): AnchoredTopic | undefined;
}

export interface AnchorSettings {
  floor: number;
  /** Score units per factor e in the mixture's likelihood. */
  temperature: number;
}

/**
 * Temperature of the mixture's likelihoods, in score units: a score 0.1 higher is e times
 * as likely. 0.05–0.2 gave the same grouping on the StackFAQ dev weeks; 0.1 was best.
 */
export const ANCHOR_TEMPERATURE = 0.1;
/** Share of the floor a question needs to join a topic another question confirmed. */
export const SUPPORTED_MATCH_SHARE = 0.5;
const EM_MAX_ITERATIONS = 50;
const EM_TOLERANCE = 1e-6;

export function anchorQuestions(questions: AnchorQuestion[], settings: AnchorSettings): Anchoring {
  const entries = new Map<string, KbTopicEntries>();
  const candidates = questions.map((q) => {
    const byKey = new Map<string, number>();
    for (const hit of q.hits ?? []) {
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

  const anchors = weekPriorAnchors(
    candidates,
    questions.map((q) => q.weight),
    settings.temperature,
  );

  // A topic is confirmed by the combined evidence of its questions or by an automatic answer.
  const evidence = new Map<string, number[]>();
  anchors.forEach((key, i) => {
    if (key === undefined) return;
    const score = questions[i]!.autoAnswered ? 1 : candidates[i]!.get(key)!;
    evidence.set(key, [...(evidence.get(key) ?? []), score]);
  });
  const confirmed = new Set(
    [...evidence].filter(([, scores]) => noisyOr(scores) >= settings.floor).map(([key]) => key),
  );
  const members = new Map<string, number[]>();
  const leftovers: number[] = [];
  anchors.forEach((key, i) => {
    const joins =
      key !== undefined &&
      confirmed.has(key) &&
      (questions[i]!.autoAnswered ||
        candidates[i]!.get(key)! >= settings.floor * SUPPORTED_MATCH_SHARE);
    if (!joins) leftovers.push(i);
    else members.set(key, [...(members.get(key) ?? []), i]);
  });

  const anchored = [...members].map(([key, m]) => kbTopic(entries, key, m));
  anchored.sort((a, b) => a.members[0]! - b.members[0]!);
  return {
    candidates,
    anchored,
    leftovers,
    topicOf: (key, m) => (entries.has(key) ? kbTopic(entries, key, m) : undefined),
  };
}

/**
 * The KB topic a group of questions (e.g. a cluster of unanswered ones) points to, when
 * their combined evidence reaches the floor: the candidate with the most evidence,
 * 1 − Π(1 − score) over the group's questions.
 */
export function groupAnchor(
  members: number[],
  candidates: Array<Map<string, number>>,
  floor: number,
): string | undefined {
  const scores = new Map<string, number[]>();
  for (const i of members)
    for (const [key, s] of candidates[i]!) scores.set(key, [...(scores.get(key) ?? []), s]);
  let best: string | undefined;
  let bestConfidence = -1;
  for (const [key, list] of [...scores].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) {
    const c = noisyOr(list);
    if (c > bestConfidence + 1e-12) {
      best = key;
      bestConfidence = c;
    }
  }
  return best !== undefined && bestConfidence >= floor ? best : undefined;
}

/** Probability that at least one piece of evidence holds, taking them as independent. */
function noisyOr(scores: number[]): number {
  return 1 - scores.reduce((p, s) => p * (1 - Math.min(1, Math.max(0, s))), 1);
}

interface KbTopicEntries {
  question: string;
  best: KbHit;
  minId: string;
}

function kbTopic(
  entries: Map<string, KbTopicEntries>,
  key: string,
  members: number[],
): AnchoredTopic {
  const e = entries.get(key)!;
  return { key, question: e.question, best: e.best, canonicalEntryId: e.minId, members };
}

/**
 * Each question's most likely KB topic under a mixture model fitted to the week:
 * EM on the mixture weights only (the likelihoods come from the search scores).
 * Topics few questions support lose weight, so borderline questions move to the
 * topic their paraphrases agree on. Deterministic: ties go to the higher score, then
 * the smaller key.
 */
export function weekPriorAnchors(
  candidates: Array<Map<string, number>>,
  weights: number[],
  temperature: number,
): Array<string | undefined> {
  const prior = new Map<string, number>();
  for (const c of candidates) for (const key of c.keys()) prior.set(key, 1);
  // exp(score / T) relative to the question's best score: no overflow whatever T is.
  const likelihood = candidates.map((c) => {
    const best = Math.max(...c.values());
    return new Map([...c].map(([key, s]) => [key, Math.exp((s - best) / temperature)]));
  });

  let posterior: Array<Map<string, number>> = [];
  for (let iteration = 0; iteration < EM_MAX_ITERATIONS; iteration++) {
    posterior = likelihood.map((l) => {
      let z = 0;
      const r = new Map<string, number>();
      for (const [key, v] of l) {
        const p = prior.get(key)! * v;
        r.set(key, p);
        z += p;
      }
      if (z > 0) for (const [key, p] of r) r.set(key, p / z);
      return r;
    });
    let change = 0;
    const total = weights.reduce((a, b) => a + b, 0) || 1;
    const next = new Map<string, number>();
    for (const key of prior.keys()) next.set(key, 0);
    posterior.forEach((r, i) => {
      for (const [key, p] of r) next.set(key, next.get(key)! + (weights[i]! * p) / total);
    });
    for (const [key, p] of next) change = Math.max(change, Math.abs(p - prior.get(key)!));
    for (const [key, p] of next) prior.set(key, p);
    if (change < EM_TOLERANCE) break;
  }

  return posterior.map((r, i) => {
    let bestKey: string | undefined;
    let bestP = -1;
    for (const [key, p] of r) {
      const better =
        p > bestP + 1e-12 ||
        (Math.abs(p - bestP) <= 1e-12 &&
          bestKey !== undefined &&
          (candidates[i]!.get(key)! > candidates[i]!.get(bestKey)! ||
            (candidates[i]!.get(key) === candidates[i]!.get(bestKey) && key < bestKey)));
      if (better) {
        bestKey = key;
        bestP = p;
      }
    }
    return bestKey;
  });
}
