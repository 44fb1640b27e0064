import type { Logger } from '@support-agent/shared';
import {
  SUMMARY_VERSION,
  type DigestSummary,
  type SummaryTopic,
  type TopicAnswer,
} from './digest-summary.js';
import {
  examplesOf,
  groupWeek,
  identityOf,
  ticketsOf,
  titleOf,
  type GroupedTopic,
  type GroupingDeps,
  type GroupingSettings,
} from './group-week.js';
import { isoWeekName, weekEndInstant, weekEndOf } from './iso-week.js';
import type { AggregateStore, DigestStore, StoredDigest, TopicSummarizer } from './ports.js';
import { previousWeekTopics } from './previous-week.js';
import { renderDigestMarkdown } from './render-markdown.js';
import { leadSentences, oneLine, truncate, withoutControlChars } from './text.js';
import { assignTopicIds, trendOf } from './week-over-week.js';

export { thresholdFor } from './group-week.js';

export interface DigestSettings extends GroupingSettings {
  /** Topics shown with their answers. */
  topTopics: number;
  /** Unanswered topics listed in the Markdown, biggest first (the structured form has all). */
  unansweredListed: number;
  /** Tickets of one week considered for topics (the count always covers all). */
  maxTickets: number;
  /** Time budget of the LLM summary; then the extractive answers stay. */
  llmTimeoutMs: number;
}

export interface BuildDigestDeps extends GroupingDeps {
  store: AggregateStore & DigestStore;
  summarizer: TopicSummarizer | undefined;
  settings: DigestSettings;
  logger: Logger;
  now: () => Date;
}

const KB_ANSWER_LEAD = 400;
const SUMMARY_SOURCE_MAX = 2_000;
const QUESTIONS_PER_SUMMARY = 5;

/**
 * Builds (or rebuilds) one organization's digest of one ISO week and stores it: the
 * week's questions grouped into topics anchored on the KB entries that answer them
 * (the rest clustered as unanswered topics), compared with last week's topics, and
 * rendered as Markdown with the same content in structured form.
 */
export async function buildDigest(
  deps: BuildDigestDeps,
  orgId: string,
  weekStart: string,
): Promise<StoredDigest> {
  const { store, settings, logger } = deps;
  const started = Date.now();
  const [tickets, ticketCount] = await Promise.all([
    store.weekTickets(orgId, weekStart, settings.maxTickets),
    store.weekTicketCount(orgId, weekStart),
  ]);
  const week = await groupWeek(deps, settings, orgId, tickets);
  const previous = await previousWeekTopics(deps, orgId, weekStart, week);

  const { ids, predecessors } = assignTopicIds(
    week.topics.map(identityOf),
    previous,
    week.matchThreshold,
  );
  const comparable = previous !== undefined;
  const sources: Array<string | undefined> = [];
  const topics: SummaryTopic[] = week.topics.map((t, i) => {
    const { answer, source } = answerOf(t);
    sources.push(source);
    const lastWeekTickets = predecessors[i]?.tickets ?? 0;
    return {
      id: ids[i]!,
      title: titleOf(t),
      answered: t.anchor !== undefined,
      tickets: t.size,
      lastWeekTickets,
      trend: trendOf(t.size, lastWeekTickets, comparable),
      answeredAutomatically: ticketsOf(t).filter((k) => k.answered).length,
      examples: examplesOf(t),
      answer,
      ticketIds: ticketsOf(t)
        .map((k) => k.ticketId)
        .sort((a, b) => a - b),
    };
  });
  await summarize(deps, week.topics, topics, sources);

  const now = deps.now();
  const summary: DigestSummary = withoutControlChars({
    version: SUMMARY_VERSION,
    weekStart,
    weekEnd: weekEndOf(weekStart),
    isoWeek: isoWeekName(weekStart),
    ticketCount,
    partial: now.getTime() < weekEndInstant(weekStart).getTime(),
    groupedTickets: tickets.length,
    answeredAutomatically: tickets.filter((t) => t.answered).length,
    lastWeekTicketCount: previous?.ticketCount,
    kbChecked: week.kbChecked,
    topics,
  });
  const digest: StoredDigest = {
    orgId,
    weekStart,
    weekEnd: summary.weekEnd,
    ticketCount,
    content: renderDigestMarkdown(summary, {
      topTopics: settings.topTopics,
      unansweredListed: settings.unansweredListed,
    }),
    generatedAt: now,
    summary,
  };
  await store.saveDigest(digest);
  logger.info(
    {
      orgId,
      weekStart,
      ticketCount,
      topics: topics.length,
      answeredTopics: topics.filter((t) => t.answered).length,
      compared: comparable,
      ms: Date.now() - started,
    },
    'digest built',
  );
  return digest;
}

/**
 * An anchored topic is answered by its KB entry. A topic without one shows the automatic
 * answer triage sent to one of its tickets, when there was one (e.g. the KB could not be
 * searched during the build). `source` is the grounded text an LLM may summarize.
 */
function answerOf(t: GroupedTopic): { answer: TopicAnswer | undefined; source?: string } {
  if (t.anchor) {
    const entry = t.anchor.best;
    return {
      answer: {
        kind: 'kb',
        text: leadSentences(entry.answer, KB_ANSWER_LEAD),
        kbEntryId: entry.entryId,
        kbQuestion: entry.question,
        summarized: false,
      },
      source: truncate(oneLine(entry.answer), SUMMARY_SOURCE_MAX),
    };
  }
  const answered = ticketsOf(t).filter((k) => k.answered);
  if (answered.length === 0) return { answer: undefined };
  const sent = answered.find((k) => k.aiAnswer)?.aiAnswer;
  if (!sent) {
    return {
      answer: {
        kind: 'auto',
        text: 'Answered automatically from the knowledge base.',
        summarized: false,
      },
    };
  }
  return {
    answer: { kind: 'auto', text: leadSentences(sent, KB_ANSWER_LEAD), summarized: false },
    source: truncate(oneLine(sent), SUMMARY_SOURCE_MAX),
  };
}

/** The LLM (when configured) rewrites the answers of the top topics from their grounded text. */
async function summarize(
  deps: BuildDigestDeps,
  groups: GroupedTopic[],
  topics: SummaryTopic[],
  sources: Array<string | undefined>,
): Promise<void> {
  const summarizer = deps.summarizer;
  const chosen = topics
    .slice(0, deps.settings.topTopics)
    .map((t, i) => ({ t, i }))
    .filter(({ t, i }) => t.answer && sources[i]);
  if (!summarizer || chosen.length === 0) return;
  try {
    const summaries = await summarizer.summarize(
      chosen.map(({ t, i }) => ({
        label: t.title,
        questions: groups[i]!.questions.slice(0, QUESTIONS_PER_SUMMARY).map((q) => q.text),
        source: sources[i]!,
      })),
      deps.settings.llmTimeoutMs,
    );
    chosen.forEach(({ t }, n) => {
      const s = summaries[n];
      if (s && t.answer) t.answer = { ...t.answer, text: s, summarized: true };
    });
  } catch (err) {
    deps.logger.warn(
      { err: (err as Error).message, summarizer: summarizer.name },
      'LLM summary failed; keeping the extractive answers',
    );
  }
}
