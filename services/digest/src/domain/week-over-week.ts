import { createHash } from 'node:crypto';
import { dot } from './cluster-topics.js';
import type { SummaryTopic, TopicTrend } from './digest-summary.js';
import { questionKey } from './text.js';

/**
 * Topic identity across weeks and what changed since last week.
 *
 * Ids: a topic anchored on the KB is `kb:<entry id>` (the smallest id among the entries
 * sharing its KB question) and keeps last week's id when last week had a topic with
 * the same KB question. An unanswered cluster inherits the id of last week's unanswered
 * topic whose texts are most similar to its centroid (at least the match threshold, one to
 * one, most similar pairs first); otherwise it gets `q:<hash of its central text>`.
 */

export interface IdentityDraft {
  /** questionKey of the KB question, for anchored topics. */
  kbKey: string | undefined;
  kbEntryId: string | undefined;
  /** The central question (unanswered) or KB question (anchored). */
  title: string;
  /** Unit-length weighted mean embedding of the members (unanswered topics). */
  centroid: Float64Array | undefined;
}

/** Last week's topics, with an embedding of each unanswered one (same space as this week's). */
export interface PreviousTopics {
  topics: SummaryTopic[];
  /** Same order as `topics`; undefined for anchored topics. */
  vectors: Array<Float64Array | undefined>;
}

/** Rising/falling needs this many tickets of change and at least half of last week's count. */
export const TREND_MIN_CHANGE = 2;
export const TREND_MIN_RATIO = 0.5;

export function assignTopicIds(
  drafts: IdentityDraft[],
  previous: PreviousTopics | undefined,
  matchThreshold: number,
): { ids: string[]; predecessors: Array<SummaryTopic | undefined> } {
  const prior = previous?.topics ?? [];
  const predecessors: Array<SummaryTopic | undefined> = drafts.map(() => undefined);
  const ids: Array<string | undefined> = drafts.map(() => undefined);
  const taken = new Set<number>();

  const byKbKey = new Map<string, number>();
  prior.forEach((t, i) => {
    if (t.answered) byKbKey.set(questionKey(t.title), i);
  });
  drafts.forEach((d, i) => {
    if (d.kbKey === undefined) return;
    const p = byKbKey.get(d.kbKey);
    if (p !== undefined && !taken.has(p)) {
      taken.add(p);
      predecessors[i] = prior[p];
      ids[i] = prior[p]!.id;
    } else ids[i] = `kb:${d.kbEntryId}`;
  });

  // Unanswered clusters: most similar (this week, last week) pairs first, one to one.
  const pairs: Array<{ d: number; p: number; s: number }> = [];
  drafts.forEach((d, i) => {
    if (d.kbKey !== undefined || !d.centroid) return;
    prior.forEach((t, j) => {
      const v = previous!.vectors[j];
      if (t.answered || !v) return;
      const s = dot(d.centroid!, v);
      if (s >= matchThreshold) pairs.push({ d: i, p: j, s });
    });
  });
  pairs.sort((a, b) => b.s - a.s || a.d - b.d || a.p - b.p);
  for (const { d, p } of pairs) {
    if (ids[d] !== undefined || taken.has(p)) continue;
    taken.add(p);
    predecessors[d] = prior[p];
    ids[d] = prior[p]!.id;
  }

  // Fresh ids, unique within the week (two texts could share a key, an id could be inherited).
  const used = new Set(ids.filter((id): id is string => id !== undefined));
  const final = drafts.map((d, i) => {
    if (ids[i] !== undefined) return ids[i]!;
    let id = `q:${shortHash(questionKey(d.title))}`;
    for (let n = 2; used.has(id); n++) id = `q:${shortHash(`${questionKey(d.title)}#${n}`)}`;
    used.add(id);
    return id;
  });
  return { ids: dedupe(final), predecessors };
}

/** Anchored ids can collide when a KB question changed; later ones get a suffix. */
function dedupe(ids: string[]): string[] {
  const seen = new Set<string>();
  return ids.map((id) => {
    let out = id;
    for (let n = 2; seen.has(out); n++) out = `${id}~${n}`;
    seen.add(out);
    return out;
  });
}

/** New, rising, falling or steady; undefined when last week had no tickets to compare with. */
export function trendOf(
  thisWeek: number,
  lastWeek: number,
  comparable: boolean,
): TopicTrend | undefined {
  if (!comparable) return undefined;
  if (lastWeek === 0) return 'new';
  const needed = Math.max(TREND_MIN_CHANGE, Math.ceil(TREND_MIN_RATIO * lastWeek));
  if (thisWeek - lastWeek >= needed) return 'rising';
  if (lastWeek - thisWeek >= needed) return 'falling';
  return 'steady';
}

function shortHash(text: string): string {
  return createHash('sha256').update(text, 'utf8').digest('hex').slice(0, 12);
}
