import { unansweredTopics, type DigestSummary, type SummaryTopic } from './digest-summary.js';
import { escapeMarkdown, inline } from './text.js';

export interface RenderOptions {
  /** Topics shown with their answers. */
  topTopics: number;
  /** Unanswered topics listed; the rest are counted. */
  unansweredListed: number;
}

const LABEL_MAX = 160;
const EXAMPLE_MAX = 100;
const ANSWER_MAX = 600;
/** New or rising topics named in "What changed". */
const CHANGES_LISTED = 5;

/**
 * The digest as Markdown, for a support lead deciding which articles to write:
 * title and totals, what changed since last week, the top topics with their KB
 * answers, the other answered topics, and the unanswered topics with the tickets a
 * new article would have covered.
 */
export function renderDigestMarkdown(summary: DigestSummary, options: RenderOptions): string {
  const lines: string[] = [];
  lines.push(`# FAQ digest: ${summary.weekStart} to ${summary.weekEnd} (${summary.isoWeek})`, '');
  if (summary.partial)
    lines.push('_Partial: built before the end of the week; later tickets are not included._', '');
  if (summary.ticketCount === 0) {
    lines.push('**Total tickets: 0**', '', 'No tickets were created this week.');
    return lines.join('\n') + '\n';
  }
  lines.push(totals(summary), '');
  lines.push(...whatChanged(summary), '');

  const top = summary.topics.slice(0, options.topTopics);
  lines.push('## Top topics', '');
  top.forEach((topic, i) => {
    lines.push(
      `### ${i + 1}. ${inline(topic.title, LABEL_MAX)} (${plural(topic.tickets, 'ticket')} asked)`,
      '',
    );
    const facts = topicFacts(topic);
    if (facts) lines.push(facts, '');
    if (topic.examples.length > 0) {
      lines.push(
        `Also asked as: ${topic.examples.map((e) => `“${inline(e, EXAMPLE_MAX)}”`).join('; ')}`,
        '',
      );
    }
    lines.push(...answerLines(topic, summary.kbChecked), '');
  });

  const others = summary.topics.slice(options.topTopics).filter((t) => t.answered);
  if (others.length > 0) {
    lines.push('## Other topics the knowledge base answers', '');
    for (const t of others) {
      const facts = topicFacts(t);
      lines.push(
        `- ${inline(t.title, LABEL_MAX)} (${plural(t.tickets, 'ticket')}${facts ? `; ${facts}` : ''})`,
      );
    }
    lines.push('');
  }

  lines.push(...unansweredLines(summary, options.unansweredListed));
  return lines.join('\n').replace(/\n+$/, '') + '\n';
}

function totals(s: DigestSummary): string {
  const topics = plural(s.topics.length, 'topic');
  const last =
    s.lastWeekTicketCount === undefined
      ? ''
      : `; last week ${s.lastWeekTicketCount} (${signed(s.ticketCount - s.lastWeekTicketCount)})`;
  const auto =
    s.groupedTickets > 0
      ? ` ${s.answeredAutomatically} answered automatically (${percent(s.answeredAutomatically, s.groupedTickets)}).`
      : '';
  const grouped =
    s.groupedTickets < s.ticketCount ? ` Topics cover the first ${s.groupedTickets} tickets.` : '';
  return `**Total tickets: ${s.ticketCount}** (${plural(s.ticketCount, 'ticket')} in ${topics}${last}).${auto}${grouped}`;
}

function whatChanged(s: DigestSummary): string[] {
  const out = ['## What changed', ''];
  if (s.lastWeekTicketCount === undefined) {
    out.push('- No tickets last week: nothing to compare with yet.');
  } else {
    const fresh = s.topics.filter((t) => t.trend === 'new');
    const rising = s.topics.filter((t) => t.trend === 'rising');
    const falling = s.topics.filter((t) => t.trend === 'falling');
    out.push(`- **New:** ${named(fresh, (t) => plural(t.tickets, 'ticket'))}`);
    out.push(
      `- **Rising:** ${named(rising, (t) => `${plural(t.tickets, 'ticket')}, last week ${t.lastWeekTickets}`)}`,
    );
    if (falling.length > 0)
      out.push(
        `- **Falling:** ${named(falling, (t) => `${plural(t.tickets, 'ticket')}, last week ${t.lastWeekTickets}`)}`,
      );
  }
  const answeredTickets = s.topics.filter((t) => t.answered).reduce((n, t) => n + t.tickets, 0);
  if (s.kbChecked && s.groupedTickets > 0) {
    out.push(
      `- **Answered by the knowledge base:** ${answeredTickets} of ${plural(s.groupedTickets, 'ticket')} (${percent(answeredTickets, s.groupedTickets)}); ${s.answeredAutomatically} answered automatically (${percent(s.answeredAutomatically, s.groupedTickets)}).`,
    );
    const missing = unansweredTopics(s);
    const covered = missing.reduce((n, t) => n + t.tickets, 0);
    out.push(
      missing.length === 0
        ? '- **Missing articles:** none, every topic has a knowledge-base entry.'
        : `- **Missing articles:** ${plural(missing.length, 'topic')} without a knowledge-base entry; new articles would have covered ${plural(covered, 'ticket')}.`,
    );
  }
  return out;
}

/** "Title (detail); Title (detail)" for the first few, then "and n more". */
function named(topics: SummaryTopic[], detail: (t: SummaryTopic) => string): string {
  if (topics.length === 0) return 'none';
  const listed = topics
    .slice(0, CHANGES_LISTED)
    .map((t) => `${inline(t.title, LABEL_MAX)} (${detail(t)})`);
  const more = topics.length - listed.length;
  return listed.join('; ') + (more > 0 ? `; and ${more} more` : '');
}

/** "last week 3, rising · 2 answered automatically (40 %)". */
function topicFacts(t: SummaryTopic): string {
  const parts: string[] = [];
  if (t.trend === 'new') parts.push('new this week');
  else if (t.trend !== undefined) parts.push(`last week ${t.lastWeekTickets}, ${t.trend}`);
  if (t.answeredAutomatically > 0)
    parts.push(
      `${t.answeredAutomatically} answered automatically (${percent(t.answeredAutomatically, t.tickets)})`,
    );
  return parts.join(' · ');
}

function answerLines(topic: SummaryTopic, kbChecked: boolean): string[] {
  const a = topic.answer;
  if (!a) {
    return kbChecked
      ? ['_No knowledge-base entry answers this yet: see “Unanswered topics”._']
      : ['_The knowledge base could not be checked when this digest was built._'];
  }
  const text =
    a.text.length > ANSWER_MAX ? [...a.text].slice(0, ANSWER_MAX).join('') + '…' : a.text;
  const out = [`**Answer:** ${escapeMarkdown(text)}`, ''];
  const via = a.summarized ? ' (summarized)' : '';
  if (a.kind === 'kb') {
    out.push(`_Source: knowledge-base entry “${inline(a.kbQuestion ?? '', LABEL_MAX)}”${via}._`);
  } else {
    out.push(
      `_Source: automatic answer sent to ${topic.answeredAutomatically} of ${plural(topic.tickets, 'ticket')}${via}._`,
    );
  }
  return out;
}

function unansweredLines(s: DigestSummary, listed: number): string[] {
  const out = ['## Unanswered topics — need a KB article', ''];
  if (!s.kbChecked) {
    out.push('_The knowledge base could not be checked when this digest was built._');
    return out;
  }
  const missing = unansweredTopics(s);
  if (missing.length === 0) {
    out.push('None: every topic has a knowledge-base entry or an automatic answer.');
    return out;
  }
  for (const t of missing.slice(0, listed)) {
    const trend =
      t.trend === 'new'
        ? ', new this week'
        : t.trend !== undefined
          ? `, last week ${t.lastWeekTickets}`
          : '';
    const also =
      t.examples.length > 0 ? ` — also asked as “${inline(t.examples[0]!, EXAMPLE_MAX)}”` : '';
    out.push(
      `- ${inline(t.title, LABEL_MAX)} (${plural(t.tickets, 'ticket')} a new article would have covered${trend})${also}`,
    );
  }
  const rest = missing.slice(listed);
  if (rest.length > 0) {
    const tickets = rest.reduce((n, t) => n + t.tickets, 0);
    out.push(`- … and ${plural(rest.length, 'smaller topic')} (${plural(tickets, 'ticket')}).`);
  }
  return out;
}

function plural(n: number, noun: string): string {
  return `${n} ${noun}${n === 1 ? '' : 's'}`;
}

function percent(part: number, whole: number): string {
  return `${whole > 0 ? Math.round((100 * part) / whole) : 0} %`;
}

function signed(n: number): string {
  return n > 0 ? `+${n}` : n < 0 ? `−${-n}` : '±0';
}
