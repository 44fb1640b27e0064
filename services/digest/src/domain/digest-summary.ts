/**
 * The structured form of a weekly digest: what the Markdown says, as data. It is
 * stored with the digest (next week's build reads this week's counts back from it)
 * and returned to admins; the public API keeps serving the Markdown only.
 */

export const SUMMARY_VERSION = 1;

export type TopicTrend = 'new' | 'rising' | 'steady' | 'falling';

export interface TopicAnswer {
  /** Where the answer comes from: the topic's KB entry, or an automatic answer sent to a ticket. */
  kind: 'kb' | 'auto';
  text: string;
  /** The KB entry behind the answer, when known. */
  kbEntryId?: string | undefined;
  kbQuestion?: string | undefined;
  /** Written by the configured LLM from the grounded text (otherwise extractive). */
  summarized: boolean;
}

export interface SummaryTopic {
  /**
   * Stable across weeks: `kb:<entry id>` for a topic anchored on a KB entry, `q:<hash>` for a
   * cluster of questions the KB does not answer (inherited from last week's most similar one).
   */
  id: string;
  /** The KB question, or for an unanswered cluster its most central ticket. */
  title: string;
  /** True when the topic is anchored on a KB entry (the KB answers it). */
  answered: boolean;
  tickets: number;
  /** Tickets of the same topic last week; 0 when it did not appear. */
  lastWeekTickets: number;
  /** Only set when last week can be compared (it had tickets). */
  trend: TopicTrend | undefined;
  /** Tickets of the topic that triage answered automatically. */
  answeredAutomatically: number;
  /** Other phrasings from the topic. */
  examples: string[];
  answer: TopicAnswer | undefined;
  /** The grouped tickets of the topic, ascending. */
  ticketIds: number[];
}

export interface DigestSummary {
  version: number;
  weekStart: string;
  weekEnd: string;
  isoWeek: string;
  ticketCount: number;
  /** Built before the week ended. */
  partial: boolean;
  /** Tickets grouped into topics (at most DIGEST_MAX_TICKETS; the count always covers all). */
  groupedTickets: number;
  answeredAutomatically: number;
  /** Last week's total, undefined when last week had no tickets (nothing to compare). */
  lastWeekTicketCount: number | undefined;
  /** False when the knowledge service could not be searched during the build. */
  kbChecked: boolean;
  /** Biggest first; anchored and unanswered topics together. */
  topics: SummaryTopic[];
}

/** Tickets of an unanswered topic: how many a new KB article would have covered this week. */
export function unansweredTopics(summary: DigestSummary): SummaryTopic[] {
  return summary.topics.filter((t) => !t.answered && !t.answer);
}

/**
 * A stored summary read back: undefined when absent, unreadable or of another version
 * (it is then as if the week had no structured form: the next build regroups that week).
 */
export function parseSummary(text: string | null | undefined): DigestSummary | undefined {
  if (!text) return undefined;
  try {
    const parsed = JSON.parse(text) as Partial<DigestSummary> | null;
    if (parsed?.version !== SUMMARY_VERSION || !Array.isArray(parsed.topics)) return undefined;
    return parsed as DigestSummary;
  } catch {
    return undefined;
  }
}
