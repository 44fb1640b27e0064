// Domain units: event folding, topic clustering, Markdown rendering, lexical embeddings.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { applyTicketEvent, type TicketAggregate } from '../src/domain/aggregate.js';
import { clusterTopics, type Topic } from '../src/domain/cluster-topics.js';
import { parseTicketEvent, type TicketEvent } from '../src/domain/events.js';
import { renderDigestMarkdown } from '../src/domain/render-markdown.js';
import { LexicalEmbeddings, stem } from '../src/data-access/lexical-embeddings.js';
import { thresholdFor } from '../src/domain/build-digest.js';
import {
  CSV_EXPORT,
  PASSWORD_RESET,
  SINGLETONS,
  createdEvent,
  statusChangedEvent,
  triagedEvent,
} from './helpers.js';

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

describe('topic clustering with the built-in lexical embeddings', () => {
  const embeddings = new LexicalEmbeddings();
  const cluster = (texts: string[]) =>
    clusterTopics(
      texts.map((text) => ({ text, vector: embeddings.embedText(text), weight: 1 })),
      0.35,
    );

  it('when paraphrases of two questions are mixed with unrelated ones, then each paraphrase set is one topic', async () => {
    const texts = [
      CSV_EXPORT[0]!,
      PASSWORD_RESET[0]!,
      SINGLETONS[0]!,
      ...PASSWORD_RESET.slice(1),
      ...CSV_EXPORT.slice(1),
      SINGLETONS[1]!,
    ];
    const topics = await cluster(texts);
    assert.equal(topics.length, 4);
    assert.deepEqual(topics[0]!.members.map((i) => texts[i]).sort(), [...PASSWORD_RESET].sort());
    assert.deepEqual(topics[1]!.members.map((i) => texts[i]).sort(), [...CSV_EXPORT].sort());
    assert.deepEqual(
      [topics[0]!.size, topics[1]!.size, topics[2]!.size, topics[3]!.size],
      [4, 3, 1, 1],
    );
    // Same size: ordered by label.
    assert.deepEqual(
      [topics[2]!.label, topics[3]!.label],
      ['Can I delete my account?', 'Does the API support webhooks?'],
    );
  });

  it('when the input order changes, then the topics are the same', async () => {
    const a = await cluster([...PASSWORD_RESET, ...CSV_EXPORT, ...SINGLETONS]);
    const b = await cluster(
      [...SINGLETONS, ...CSV_EXPORT].reverse().concat([...PASSWORD_RESET].reverse()),
    );
    const norm = (topics: Topic[]) => topics.map((t) => `${t.size}:${t.label}`);
    assert.deepEqual(norm(a), norm(b));
  });

  it('when a topic is labelled, then the label is its most central question, the shortest on ties', async () => {
    const topics = await clusterTopics(
      [
        { text: 'reset password please now', vector: [1, 0], weight: 1 },
        { text: 'reset password', vector: [1, 0], weight: 1 },
        { text: 'password', vector: [0.8, 0.6], weight: 1 },
      ],
      0.5,
    );
    assert.equal(topics.length, 1);
    assert.equal(topics[0]!.label, 'reset password');
  });

  it('when questions are identical texts with weights, then the topic size is the number of tickets', async () => {
    const topics = await clusterTopics(
      [
        { text: 'q', vector: [1, 0], weight: 5 },
        { text: 'r', vector: [0, 1], weight: 2 },
      ],
      0.5,
    );
    assert.deepEqual(
      topics.map((t) => t.size),
      [5, 2],
    );
  });

  it('when stemming, then inflections of a word meet', () => {
    assert.equal(stem('resetting'), stem('reset'));
    assert.equal(stem('exports'), stem('exported'));
    assert.equal(stem('passwords'), 'password');
  });

  it('when the vector space is named by its fingerprint, then the matching threshold applies', () => {
    const t = { override: undefined, lexical: 0.35, hashed: 0.45, dense: 0.6 };
    assert.equal(thresholdFor('builtin/digest-lexical-v1/1024', t), 0.35);
    assert.equal(thresholdFor('hashed/hashed-v1/512', t), 0.45);
    assert.equal(thresholdFor('openai/text-embedding-3-small/1536', t), 0.6);
    assert.equal(thresholdFor('openai/x/1', { ...t, override: 0.5 }), 0.5);
  });
});

describe('digest Markdown', () => {
  const base = {
    weekStart: '2026-11-09',
    weekEnd: '2026-11-15',
    isoWeek: '2026-W46',
    partial: false,
  };

  it('when a week has topics, then the title, total, top topics and the unanswered section appear in order', () => {
    const md = renderDigestMarkdown({
      ...base,
      ticketCount: 9,
      topicCount: 3,
      top: [
        {
          label: 'How do I reset my password?',
          size: 4,
          examples: ['Password reset email never arrives'],
          answer: {
            kind: 'kb',
            text: 'Use the reset link.',
            kbQuestion: 'Resetting a password',
            summarized: false,
          },
          answeredAutomatically: 0,
          kbChecked: true,
        },
        {
          label: 'Export to CSV is not working',
          size: 3,
          examples: [],
          answer: undefined,
          answeredAutomatically: 0,
          kbChecked: true,
        },
      ],
      unanswered: [
        {
          label: 'Export to CSV is not working',
          size: 3,
          examples: [],
          answer: undefined,
          answeredAutomatically: 0,
          kbChecked: true,
        },
      ],
    });
    assert.match(md, /^# FAQ digest: 2026-11-09 to 2026-11-15 \(2026-W46\)\n/);
    assert.match(md, /\*\*Total tickets: 9\*\*/);
    const top = md.indexOf('## Top topics');
    const unanswered = md.indexOf('## Unanswered topics — need a KB article');
    assert.ok(top > 0 && unanswered > top);
    assert.match(md, /### 1\. How do I reset my password\? \(4 tickets asked\)/);
    assert.match(md, /\*\*Answer:\*\* Use the reset link\./);
    assert.match(md.slice(unanswered), /- Export to CSV is not working \(3 tickets\)/);
  });

  it('when ticket text carries Markdown or HTML, then it is escaped and flattened to one line', () => {
    const md = renderDigestMarkdown({
      ...base,
      ticketCount: 1,
      topicCount: 1,
      top: [
        {
          label: '# Hi\n[click](http://evil) <script>x</script> *bold*',
          size: 1,
          examples: [],
          answer: undefined,
          answeredAutomatically: 0,
          kbChecked: true,
        },
      ],
      unanswered: [],
    });
    assert.ok(!md.includes('[click](http://evil)'));
    assert.ok(!md.includes('<script>'));
    assert.ok(
      md.includes('### 1. \\# Hi \\[click\\](http://evil) \\<script\\>x\\</script\\> \\*bold\\*'),
      md,
    );
  });

  it('when a week had no tickets, then the digest says so', () => {
    const md = renderDigestMarkdown({
      ...base,
      ticketCount: 0,
      topicCount: 0,
      top: [],
      unanswered: [],
    });
    assert.match(md, /\*\*Total tickets: 0\*\*/);
    assert.match(md, /No tickets were created this week\./);
  });
});
