// Domain units: event folding, Markdown rendering, lexical embeddings (topics: topics.test.ts).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { applyTicketEvent, type TicketAggregate } from '../src/domain/aggregate.js';
import type { DigestSummary } from '../src/domain/digest-summary.js';
import { parseTicketEvent, type TicketEvent } from '../src/domain/events.js';
import { renderDigestMarkdown } from '../src/domain/render-markdown.js';
import { stem } from '../src/data-access/lexical-embeddings.js';
import { thresholdFor } from '../src/domain/build-digest.js';
import { createdEvent, statusChangedEvent, summaryTopic, triagedEvent } from './helpers.js';

function parse(e: unknown): TicketEvent {
  const parsed = parseTicketEvent(JSON.stringify(e));
  assert.equal(parsed.kind, 'event');
  return (parsed as { event: TicketEvent }).event;
}

function fold(events: TicketEvent[]): { state: TicketAggregate | undefined; counted: string[] } {
  let state: TicketAggregate | undefined;
  const counted: string[] = [];
  for (const e of events) {
    const r = applyTicketEvent(state, e);
    state = r.next;
    if (r.countedWeek) counted.push(r.countedWeek);
  }
  return { state, counted };
}

describe('applying ticket events', () => {
  const created = parse(
    createdEvent('acme', 7, 'How do I reset my password?', new Date('2026-11-22T23:59:59.999Z')),
  );
  const triaged = parse(
    triagedEvent('acme', 7, new Date('2026-11-23T00:00:01Z'), { answered: true }),
  );
  const resolved = parse(
    statusChangedEvent('acme', 7, new Date('2026-11-23T00:00:01Z'), 'open', 'resolved'),
  );
  const closed = parse(
    statusChangedEvent('acme', 7, new Date('2026-11-24T09:00:00Z'), 'resolved', 'closed'),
  );

  it('when a ticket is created on Sunday 23:59:59.999 and triaged on Monday, then it counts once, in the week of its creation', () => {
    const { state, counted } = fold([created, triaged, resolved]);
    assert.deepEqual(counted, ['2026-11-16']);
    assert.equal(state?.weekStart, '2026-11-16');
    assert.equal(state?.status, 'resolved');
    assert.equal(state?.answered, true);
    assert.equal(state?.category, 'how_to');
  });

  it('when events arrive out of order, then the result equals the in-order one and the ticket still counts once', () => {
    const inOrder = fold([created, triaged, resolved, closed]);
    const shuffled = fold([closed, triaged, created, resolved]);
    assert.deepEqual(shuffled.state, inOrder.state);
    assert.deepEqual(shuffled.counted, ['2026-11-16']);
    assert.equal(shuffled.state?.status, 'closed');
  });

  it('when events carry the ticket number apart from its key, then the ticket is known by its number; events without a number by their ticket_id', () => {
    const at = new Date('2026-11-23T10:00:00Z');
    const numbered = [
      createdEvent('acme', 9001, 'Where are my invoices?', at),
      triagedEvent('acme', 9001, at, { answered: false }),
    ].map((e) => parse({ ...e, ticket_number: 3 }));
    const { state, counted } = fold(numbered);
    assert.equal(state?.ticketId, 3);
    assert.deepEqual(counted, ['2026-11-23']);
    assert.equal(fold([created]).state?.ticketId, 7);
  });

  it('when a created event is applied again (a replay without the id check), then the ticket is not counted again', () => {
    assert.deepEqual(fold([created, created]).counted, ['2026-11-16']);
  });

  it('when an event is not JSON, lacks fields, or has another type, then it is malformed or ignored', () => {
    assert.equal(parseTicketEvent('{nope').kind, 'malformed');
    assert.equal(
      parseTicketEvent(
        JSON.stringify({ ...createdEvent('acme', 1, 'x', new Date()), ticket_id: 'x' }),
      ).kind,
      'malformed',
    );
    assert.deepEqual(parseTicketEvent(JSON.stringify({ type: 'tickets.deleted' })), {
      kind: 'ignored',
      type: 'tickets.deleted',
    });
  });
});

describe('lexical embeddings and thresholds', () => {
  it('when stemming, then inflections of a word meet', () => {
    assert.equal(stem('resetting'), stem('reset'));
    assert.equal(stem('exports'), stem('exported'));
    assert.equal(stem('passwords'), 'password');
  });

  it('when the vector space is named by its fingerprint, then the matching threshold applies', () => {
    const t = { override: undefined, lexical: 0.3, hashed: 0.35, dense: 0.5 };
    assert.equal(thresholdFor('builtin/digest-lexical-v1/1024', t), 0.3);
    assert.equal(thresholdFor('hashed/hashed-v1/512', t), 0.35);
    assert.equal(thresholdFor('openai/text-embedding-3-small/1536', t), 0.5);
    assert.equal(thresholdFor('openai/x/1', { ...t, override: 0.5 }), 0.5);
  });
});

describe('digest Markdown', () => {
  const options = { topTopics: 2, unansweredListed: 1 };
  const topic = summaryTopic;
  const summary = (over: Partial<DigestSummary>): DigestSummary => ({
    version: 1,
    weekStart: '2026-11-09',
    weekEnd: '2026-11-15',
    isoWeek: '2026-W46',
    ticketCount: 0,
    partial: false,
    groupedTickets: 0,
    answeredAutomatically: 0,
    lastWeekTicketCount: undefined,
    kbChecked: true,
    topics: [],
    ...over,
  });
  const kbAnswer = {
    kind: 'kb' as const,
    text: 'Use the reset link.',
    kbEntryId: 'e1',
    kbQuestion: 'How do I reset my password?',
    summarized: false,
  };
  const week = summary({
    ticketCount: 12,
    groupedTickets: 12,
    answeredAutomatically: 3,
    lastWeekTicketCount: 8,
    topics: [
      topic({
        tickets: 6,
        lastWeekTickets: 2,
        trend: 'rising',
        answeredAutomatically: 3,
        examples: ['Password reset email never arrives'],
        answer: kbAnswer,
      }),
      topic({
        id: 'q:abc',
        title: 'Export to CSV is not working',
        answered: false,
        tickets: 3,
        trend: 'new',
      }),
      topic({
        id: 'kb:e9',
        title: 'Where are the API docs?',
        tickets: 2,
        lastWeekTickets: 5,
        trend: 'falling',
        answer: { ...kbAnswer, kbEntryId: 'e9' },
      }),
      topic({
        id: 'q:def',
        title: 'Can I pay by cheque?',
        answered: false,
        tickets: 1,
        lastWeekTickets: 1,
        trend: 'steady',
      }),
    ],
  });

  it('when a week has topics, then "What changed" leads, then the top topics with answers, the other answered topics and the unanswered ones', () => {
    const md = renderDigestMarkdown(week, options);
    assert.match(md, /^# FAQ digest: 2026-11-09 to 2026-11-15 \(2026-W46\)\n/);
    assert.match(
      md,
      /\*\*Total tickets: 12\*\* \(12 tickets in 4 topics; last week 8 \(\+4\)\)\. 3 answered automatically \(25 %\)\./,
    );
    const sections = [
      '## What changed',
      '## Top topics',
      '## Other topics the knowledge base answers',
      '## Unanswered topics — need a KB article',
    ].map((h) => md.indexOf(h));
    assert.ok(
      sections.every((at, i) => at > 0 && (i === 0 || at > sections[i - 1]!)),
      md,
    );
    const changed = md.slice(sections[0], sections[1]);
    assert.match(changed, /- \*\*New:\*\* Export to CSV is not working \(3 tickets\)/);
    assert.match(
      changed,
      /- \*\*Rising:\*\* How do I reset my password\? \(6 tickets, last week 2\)/,
    );
    assert.match(changed, /- \*\*Falling:\*\* Where are the API docs\? \(2 tickets, last week 5\)/);
    assert.match(
      changed,
      /- \*\*Answered by the knowledge base:\*\* 8 of 12 tickets \(67 %\); 3 answered automatically \(25 %\)\./,
    );
    assert.match(
      changed,
      /- \*\*Missing articles:\*\* 2 topics without a knowledge-base entry; new articles would have covered 4 tickets\./,
    );
    assert.match(
      md,
      /### 1\. How do I reset my password\? \(6 tickets asked\)\n\nlast week 2, rising · 3 answered automatically \(50 %\)\n\nAlso asked as: “Password reset email never arrives”\n\n\*\*Answer:\*\* Use the reset link\./,
    );
    assert.match(
      md,
      /### 2\. Export to CSV is not working \(3 tickets asked\)\n\nnew this week\n\n_No knowledge-base entry answers this yet/,
    );
    assert.match(
      md.slice(sections[2], sections[3]),
      /^- Where are the API docs\? \(2 tickets; last week 5, falling\)$/m,
    );
    const unanswered = md.slice(sections[3]);
    assert.match(
      unanswered,
      /^- Export to CSV is not working \(3 tickets a new article would have covered, new this week\)$/m,
    );
    // One listed (unansweredListed = 1), the rest counted.
    assert.match(unanswered, /^- … and 1 smaller topic \(1 ticket\)\.$/m);
  });

  it('when last week had no tickets, then "What changed" says there is nothing to compare and no trend is shown', () => {
    const md = renderDigestMarkdown(
      summary({
        ...week,
        lastWeekTicketCount: undefined,
        topics: week.topics.map((t) => ({ ...t, trend: undefined, lastWeekTickets: 0 })),
      }),
      options,
    );
    assert.match(md, /## What changed\n\n- No tickets last week: nothing to compare with yet\./);
    assert.doesNotMatch(md, /New:|Rising:|last week \d/);
  });

  it('when ticket text carries Markdown or HTML, then it is escaped and flattened to one line', () => {
    const md = renderDigestMarkdown(
      summary({
        ticketCount: 1,
        groupedTickets: 1,
        topics: [
          topic({ title: '# Hi\n[click](http://evil) <script>x</script> *bold*', answered: false }),
        ],
      }),
      options,
    );
    assert.ok(!md.includes('[click](http://evil)'));
    assert.ok(!md.includes('<script>'));
    assert.ok(
      md.includes('### 1. \\# Hi \\[click\\](http://evil) \\<script\\>x\\</script\\> \\*bold\\*'),
      md,
    );
  });

  it('when the KB could not be searched, then no topic is called unanswered', () => {
    const md = renderDigestMarkdown(
      summary({
        ...week,
        kbChecked: false,
        topics: week.topics.map((t) => ({ ...t, answered: false, answer: undefined })),
      }),
      options,
    );
    assert.match(
      md,
      /## Unanswered topics — need a KB article\n\n_The knowledge base could not be checked when this digest was built\._/,
    );
    assert.doesNotMatch(md, /Missing articles/);
  });

  it('when a week had no tickets, then the digest says so', () => {
    const md = renderDigestMarkdown(summary({}), options);
    assert.match(md, /\*\*Total tickets: 0\*\*/);
    assert.match(md, /No tickets were created this week\./);
  });
});
