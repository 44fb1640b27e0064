import { SUMMARY_VERSION, type SummaryTopic } from './digest-summary.js';
import {
  examplesOf,
  groupWeek,
  identityOf,
  ticketsOf,
  titleOf,
  unit,
  type GroupingDeps,
  type GroupingSettings,
  type WeekTopics,
} from './group-week.js';
import { addDays } from './iso-week.js';
import type { AggregateStore, DigestStore } from './ports.js';
import { truncate } from './text.js';
import { assignTopicIds, type PreviousTopics } from './week-over-week.js';

export interface PreviousWeekDeps extends GroupingDeps {
  store: Pick<AggregateStore, 'weekTickets' | 'weekTicketCount'> & Pick<DigestStore, 'digestOf'>;
  settings: GroupingSettings & { maxTickets: number };
}

export type PreviousWeek = PreviousTopics & { ticketCount: number };

const EMBED_TEXT_MAX = 500;

/**
 * Last week's topics, to compare this week with: the stored digest's structured form
 * when it covers the whole week as it stands now (built after the week ended, no ticket
 * counted since); otherwise last week is grouped again now (its ids inherited from the
 * stored digest, if any). Undefined when last week had no tickets: nothing to compare.
 */
export async function previousWeekTopics(
  deps: PreviousWeekDeps,
  orgId: string,
  weekStart: string,
  week: WeekTopics,
): Promise<PreviousWeek | undefined> {
  const lastWeek = addDays(weekStart, -7);
  const ticketCount = await deps.store.weekTicketCount(orgId, lastWeek);
  if (ticketCount === 0) return undefined;
  const stored = (await deps.store.digestOf(orgId, lastWeek))?.summary;
  const usable = stored?.version === SUMMARY_VERSION ? stored : undefined;
  if (usable && !usable.partial && usable.ticketCount === ticketCount) {
    return { ...(await withVectors(deps, usable.topics, week.fingerprint)), ticketCount };
  }

  const tickets = await deps.store.weekTickets(orgId, lastWeek, deps.settings.maxTickets);
  const regrouped = await groupWeek(deps, deps.settings, orgId, tickets);
  const inherited = usable
    ? await withVectors(deps, usable.topics, regrouped.fingerprint)
    : undefined;
  const { ids } = assignTopicIds(
    regrouped.topics.map(identityOf),
    inherited,
    regrouped.matchThreshold,
  );
  const topics: SummaryTopic[] = regrouped.topics.map((t, i) => ({
    id: ids[i]!,
    title: titleOf(t),
    answered: t.anchor !== undefined,
    tickets: t.size,
    lastWeekTickets: 0,
    trend: undefined,
    answeredAutomatically: ticketsOf(t).filter((k) => k.answered).length,
    examples: examplesOf(t),
    answer: undefined,
    ticketIds: [],
  }));
  // Both weeks were embedded by this build; a fallback to other embeddings in one of them
  // leaves the spaces different, and then unanswered topics are not matched by similarity.
  const sameSpace = regrouped.fingerprint === week.fingerprint;
  return {
    topics,
    vectors: regrouped.topics.map((t) => (!t.anchor && sameSpace ? t.centroid : undefined)),
    ticketCount,
  };
}

/**
 * Embeddings of stored unanswered topics (title and examples averaged), in this build's
 * vector space; none when the embedder answers in another space.
 */
async function withVectors(
  deps: GroupingDeps,
  topics: SummaryTopic[],
  fingerprint: string,
): Promise<PreviousTopics> {
  const texts: string[] = [];
  const spans = topics.map((t) => {
    if (t.answered) return undefined;
    const start = texts.length;
    texts.push(...[t.title, ...t.examples].map((x) => truncate(x, EMBED_TEXT_MAX)));
    return [start, texts.length] as const;
  });
  if (texts.length === 0) return { topics, vectors: topics.map(() => undefined) };
  const embedded = await deps.embedder.embed(texts);
  if (embedded.fingerprint !== fingerprint) return { topics, vectors: topics.map(() => undefined) };
  const vectors = spans.map((span) => {
    if (!span) return undefined;
    const dims = embedded.vectors[span[0]]!.length;
    const sum = new Float64Array(dims);
    for (let i = span[0]; i < span[1]; i++) {
      const v = unit(Float64Array.from(embedded.vectors[i]!));
      for (let d = 0; d < dims; d++) sum[d]! += v[d]!;
    }
    return unit(sum);
  });
  return { topics, vectors };
}
