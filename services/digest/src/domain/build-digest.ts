import type { Logger } from '@support-agent/shared';
import { clusterTopics, type Topic } from './cluster-topics.js';
import { isoWeekName, weekEndInstant, weekEndOf } from './iso-week.js';
import type {
  AggregateStore,
  DigestStore,
  Embedder,
  KbHit,
  KnowledgeSearch,
  StoredDigest,
  TopicSummarizer,
  WeekTicket,
} from './ports.js';
import { renderDigestMarkdown, type DigestTopic, type TopicAnswer } from './render-markdown.js';
import { leadSentences, oneLine, questionKey, truncate } from './text.js';

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

export interface DigestSettings {
  /** Topics shown with their answers. */
  topTopics: number;
  /** Topics (biggest first) looked up in the KB; the unanswered section draws from these. */
  checkedTopics: number;
  /** A KB hit at or above this score answers a topic. */
  kbScoreFloor: number;
  /** Tickets of one week considered for topics (the count always covers all). */
  maxTickets: number;
  thresholds: TopicThresholds;
  /** Time budget of the LLM summary; then the extractive answers stay. */
  llmTimeoutMs: number;
  /** KB searches in flight at once. */
  searchConcurrency: number;
}

export interface BuildDigestDeps {
  store: AggregateStore & DigestStore;
  embedder: Embedder;
  knowledge: KnowledgeSearch;
  summarizer: TopicSummarizer | undefined;
  settings: DigestSettings;
  logger: Logger;
  now: () => Date;
}

const EMBED_TEXT_MAX = 500;
const QUERY_MAX = 2_000;
const KB_ANSWER_LEAD = 400;
const SUMMARY_SOURCE_MAX = 2_000;
const EXAMPLES_PER_TOPIC = 2;
const SEARCH_LIMIT = 3;

/** Distinct question texts of the week (identical ones asked by several tickets count once, with weight). */
interface Question {
  text: string;
  tickets: WeekTicket[];
}

interface TopicDraft {
  topic: Topic;
  questions: Question[];
  view: DigestTopic;
  /** Full grounded text for the LLM (the view holds the extractive lead). */
  sourceText?: string;
}

/**
 * Builds (or rebuilds) one organization's digest of one ISO week and stores it:
 * the week's questions grouped into topics, each top topic answered from the
 * KB or an automatic ticket answer, the rest listed as needing a KB article.
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

  const drafts = await groupIntoTopics(deps, tickets);
  const checked = drafts.slice(0, Math.max(settings.topTopics, settings.checkedTopics));
  await answerTopics(deps, orgId, checked);
  await summarize(deps, checked.slice(0, settings.topTopics));

  const now = deps.now();
  const content = renderDigestMarkdown({
    weekStart,
    weekEnd: weekEndOf(weekStart),
    isoWeek: isoWeekName(weekStart),
    ticketCount,
    partial: now.getTime() < weekEndInstant(weekStart).getTime(),
    topicCount: drafts.length,
    top: checked.slice(0, settings.topTopics).map((d) => d.view),
    unanswered: checked.filter((d) => d.view.kbChecked && !d.view.answer).map((d) => d.view),
  });
  const digest: StoredDigest = {
    orgId,
    weekStart,
    weekEnd: weekEndOf(weekStart),
    ticketCount,
    content,
    generatedAt: now,
  };
  await store.saveDigest(digest);
  logger.info(
    { orgId, weekStart, ticketCount, topics: drafts.length, ms: Date.now() - started },
    'digest built',
  );
  return digest;
}

async function groupIntoTopics(
  deps: BuildDigestDeps,
  tickets: WeekTicket[],
): Promise<TopicDraft[]> {
  const byKey = new Map<string, Question>();
  for (const t of tickets) {
    const text = oneLine(t.content);
    if (!text) continue;
    const key = questionKey(text);
    const q = byKey.get(key);
    if (q) q.tickets.push(t);
    else byKey.set(key, { text, tickets: [t] });
  }
  const questions = [...byKey.values()];
  if (questions.length === 0) return [];

  const { vectors, fingerprint } = await deps.embedder.embed(
    questions.map((q) => truncate(q.text, EMBED_TEXT_MAX)),
  );
  const threshold = thresholdFor(fingerprint, deps.settings.thresholds);
  const topics = await clusterTopics(
    questions.map((q, i) => ({ text: q.text, vector: vectors[i]!, weight: q.tickets.length })),
    threshold,
  );
  deps.logger.debug(
    { fingerprint, threshold, questions: questions.length, topics: topics.length },
    'topics clustered',
  );

  return topics.map((topic) => {
    const members = topic.members.map((i) => questions[i]!);
    const examples = members
      .filter((q) => q.text !== topic.label)
      .sort((a, b) => b.tickets.length - a.tickets.length)
      .slice(0, EXAMPLES_PER_TOPIC)
      .map((q) => q.text);
    return {
      topic,
      questions: members,
      view: {
        label: topic.label,
        size: topic.size,
        examples,
        answer: undefined,
        answeredAutomatically: members.reduce(
          (n, q) => n + q.tickets.filter((t) => t.answered).length,
          0,
        ),
        kbChecked: false,
      },
    };
  });
}

/** Threshold for a vector space: the override, else by the provider part of the fingerprint. */
export function thresholdFor(fingerprint: string, t: TopicThresholds): number {
  if (t.override !== undefined) return t.override;
  const provider = fingerprint.split('/')[0] ?? '';
  if (provider === 'builtin') return t.lexical;
  if (provider.startsWith('hashed')) return t.hashed;
  return t.dense;
}

async function answerTopics(
  deps: BuildDigestDeps,
  orgId: string,
  drafts: TopicDraft[],
): Promise<void> {
  const floor = deps.settings.kbScoreFloor;
  // After the first failure the remaining topics are not looked up: a knowledge service that is
  // down or slow would otherwise cost one deadline per topic.
  let knowledgeFailed = false;
  await mapLimit(drafts, deps.settings.searchConcurrency, async (draft) => {
    let hits: KbHit[] | undefined;
    if (!knowledgeFailed) {
      try {
        hits = await deps.knowledge.search(
          orgId,
          truncate(draft.topic.label, QUERY_MAX),
          SEARCH_LIMIT,
        );
      } catch (err) {
        if (!knowledgeFailed)
          deps.logger.warn(
            { err: (err as Error).message, orgId },
            'knowledge search failed while building a digest',
          );
        knowledgeFailed = true;
      }
    }
    draft.view.kbChecked = hits !== undefined;
    const best = hits?.[0];
    if (best && best.score >= floor) {
      draft.view.answer = kbAnswer('kb', best);
      draft.sourceText = truncate(oneLine(best.answer), SUMMARY_SOURCE_MAX);
      return;
    }
    if (draft.view.answeredAutomatically === 0) return;
    // An automatic answer was sent: show it when known, else the KB entry it most likely came from.
    const sent = draft.questions.flatMap((q) => q.tickets).find((t) => t.answered && t.aiAnswer);
    if (sent?.aiAnswer) {
      draft.view.answer = {
        kind: 'auto',
        text: leadSentences(sent.aiAnswer, KB_ANSWER_LEAD),
        kbQuestion: best?.question,
        summarized: false,
      };
      draft.sourceText = truncate(oneLine(sent.aiAnswer), SUMMARY_SOURCE_MAX);
    } else if (best) {
      draft.view.answer = kbAnswer('auto', best);
      draft.sourceText = truncate(oneLine(best.answer), SUMMARY_SOURCE_MAX);
    } else {
      draft.view.answer = {
        kind: 'auto',
        text: 'Answered automatically from the knowledge base.',
        summarized: false,
      };
    }
  });
}

function kbAnswer(kind: 'kb' | 'auto', hit: KbHit): TopicAnswer {
  return {
    kind,
    text: leadSentences(hit.answer, KB_ANSWER_LEAD),
    kbQuestion: hit.question,
    summarized: false,
  };
}

async function summarize(deps: BuildDigestDeps, drafts: TopicDraft[]): Promise<void> {
  const summarizer = deps.summarizer;
  const withSource = drafts.filter((d) => d.view.answer && d.sourceText);
  if (!summarizer || withSource.length === 0) return;
  try {
    const summaries = await summarizer.summarize(
      withSource.map((d) => ({
        label: d.topic.label,
        questions: d.questions.slice(0, 5).map((q) => q.text),
        source: d.sourceText!,
      })),
      deps.settings.llmTimeoutMs,
    );
    withSource.forEach((d, i) => {
      const s = summaries[i];
      if (s && d.view.answer) d.view.answer = { ...d.view.answer, text: s, summarized: true };
    });
  } catch (err) {
    deps.logger.warn(
      { err: (err as Error).message, summarizer: summarizer.name },
      'LLM summary failed; keeping the extractive answers',
    );
  }
}

async function mapLimit<T>(
  items: T[],
  limit: number,
  fn: (item: T) => Promise<void>,
): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < items.length) await fn(items[next++]!);
  };
  await Promise.all(Array.from({ length: Math.max(1, Math.min(limit, items.length)) }, worker));
}
