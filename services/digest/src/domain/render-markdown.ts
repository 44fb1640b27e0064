import { escapeMarkdown, inline } from './text.js';

export interface TopicAnswer {
  /** Where the answer comes from: the best KB entry, or an automatic answer sent to a ticket. */
  kind: 'kb' | 'auto';
  text: string;
  /** The KB entry's question (kind 'kb', or 'auto' when the KB entry behind it is known). */
  kbQuestion?: string | undefined;
  /** Written by the configured LLM from the grounded text (otherwise extractive). */
  summarized: boolean;
}

export interface DigestTopic {
  label: string;
  size: number;
  /** Other phrasings from the topic, for readers scanning the digest. */
  examples: string[];
  answer: TopicAnswer | undefined;
  /** Tickets of the topic that got an automatic answer. */
  answeredAutomatically: number;
  /** False when the knowledge service could not be asked. */
  kbChecked: boolean;
}

export interface DigestView {
  weekStart: string;
  weekEnd: string;
  isoWeek: string;
  ticketCount: number;
  /** Built before the week ended. */
  partial: boolean;
  topicCount: number;
  top: DigestTopic[];
  /** Checked topics with no good KB entry and no automatic answer, biggest first. */
  unanswered: DigestTopic[];
}

const LABEL_MAX = 160;
const EXAMPLE_MAX = 100;
const ANSWER_MAX = 600;

/** The digest as Markdown: title, totals, top topics with answers, unanswered topics. */
export function renderDigestMarkdown(view: DigestView): string {
  const lines: string[] = [];
  lines.push(`# FAQ digest: ${view.weekStart} to ${view.weekEnd} (${view.isoWeek})`, '');
  if (view.partial)
    lines.push('_Partial: built before the end of the week; later tickets are not included._', '');
  const tickets = plural(view.ticketCount, 'ticket');
  if (view.ticketCount === 0) {
    lines.push('**Total tickets: 0**', '', 'No tickets were created this week.');
    return lines.join('\n') + '\n';
  }
  lines.push(
    `**Total tickets: ${view.ticketCount}** (${tickets} in ${plural(view.topicCount, 'topic')}).`,
    '',
  );

  lines.push('## Top topics', '');
  view.top.forEach((topic, i) => {
    lines.push(
      `### ${i + 1}. ${inline(topic.label, LABEL_MAX)} (${plural(topic.size, 'ticket')} asked)`,
      '',
    );
    if (topic.examples.length > 0) {
      lines.push(
        `Also asked as: ${topic.examples.map((e) => `“${inline(e, EXAMPLE_MAX)}”`).join('; ')}`,
        '',
      );
    }
    lines.push(...answerLines(topic), '');
  });

  lines.push('## Unanswered topics — need a KB article', '');
  if (view.unanswered.length === 0) {
    lines.push('None: every topic checked has a knowledge-base entry or an automatic answer.');
  } else {
    for (const topic of view.unanswered) {
      lines.push(`- ${inline(topic.label, LABEL_MAX)} (${plural(topic.size, 'ticket')})`);
    }
  }
  return lines.join('\n') + '\n';
}

function answerLines(topic: DigestTopic): string[] {
  const a = topic.answer;
  if (!a) {
    return topic.kbChecked
      ? ['_No knowledge-base entry or automatic answer yet: see “Unanswered topics”._']
      : ['_The knowledge base could not be checked when this digest was built._'];
  }
  const out = [
    `**Answer:** ${escapeMarkdown(a.text.length > ANSWER_MAX ? [...a.text].slice(0, ANSWER_MAX).join('') + '…' : a.text)}`,
    '',
  ];
  const via = a.summarized ? ' (summarized)' : '';
  if (a.kind === 'kb') {
    out.push(`_Source: knowledge-base entry “${inline(a.kbQuestion ?? '', LABEL_MAX)}”${via}._`);
  } else {
    const entry = a.kbQuestion ? `, drawing on “${inline(a.kbQuestion, LABEL_MAX)}”` : '';
    out.push(
      `_Source: automatic answer sent to ${topic.answeredAutomatically} of ${plural(topic.size, 'ticket')}${entry}${via}._`,
    );
  }
  return out;
}

function plural(n: number, noun: string): string {
  return `${n} ${noun}${n === 1 ? '' : 's'}`;
}
