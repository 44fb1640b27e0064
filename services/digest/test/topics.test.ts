// Domain units: anchoring questions on KB entries, clustering the rest, grouping a week, and
// topic identity / trends across weeks.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { clusterTopics } from '../src/domain/cluster-topics.js';
import type { SummaryTopic } from '../src/domain/digest-summary.js';
import { groupWeek, titleOf, type GroupingSettings } from '../src/domain/group-week.js';
import { groupAnchor, kbCandidates } from '../src/domain/kb-anchoring.js';
import type { KbHit, KnowledgeSearch, WeekTicket } from '../src/domain/ports.js';
import { assignTopicIds, trendOf } from '../src/domain/week-over-week.js';
import { LexicalEmbeddings } from '../src/data-access/lexical-embeddings.js';
import { dot } from '../src/domain/cluster-topics.js';
import { CSV_EXPORT, PASSWORD_RESET, SINGLETONS, summaryTopic, testLogger } from './helpers.js';

const hit = (entryId: string, question: string, score: number): KbHit => ({
  entryId,
  question,
  answer: `Answer of ${entryId}.`,
  score,
});
const RESET = 'How do I reset my password?';
const EXPORT = 'How do I export to CSV?';

describe('KB candidates and the KB topic of a group of questions', () => {
  it('when entries share a KB question, then they are one candidate scored by its best hit, whose id entry is the smallest id', () => {
    const kb = kbCandidates([
      [hit('pw-2', RESET, 0.9), hit('pw-1', ' how do I reset my password ', 0.6)],
      [hit('pw-3', RESET, 0.8), hit('csv', EXPORT, 0.1)],
      undefined,
    ]);
    const key = 'how do i reset my password';
    assert.deepEqual(
      kb.scores.map((m) => [...m]),
      [
        [[key, 0.9]],
        [
          [key, 0.8],
          ['how do i export to csv', 0.1],
        ],
        [],
      ],
    );
    const topic = kb.topicOf(key, [1, 0])!;
    assert.equal(topic.canonicalEntryId, 'pw-1');
    assert.equal(topic.best.entryId, 'pw-2', 'the best-matching entry answers');
    assert.deepEqual(topic.members, [0, 1]);
    assert.equal(kb.topicOf('unknown', [0]), undefined);
  });

  it('when a group of questions points to one KB topic, then groupAnchor names it only when its mean score over the tickets reaches the floor', () => {
    const scores = [
      new Map([['pw', 0.9]]),
      new Map([
        ['csv', 0.4],
        ['pw', 0.2],
      ]),
      new Map([['csv', 0.3]]),
    ];
    const none = [false, false, false];
    // pw: (0.9 + 0.2) / 2 = 0.55; csv: 0.4 / 2 = 0.2
    assert.equal(groupAnchor([0, 1], scores, [1, 1, 1], none, 0.5), 'pw');
    // pw: (0.9 + 3 · 0.2) / 4 = 0.375 < 0.5: most of these tickets are not answered by it
    assert.equal(groupAnchor([0, 1], scores, [1, 3, 1], none, 0.5), undefined);
    // csv: (0.4 + 0.3) / 2 = 0.35 is the best, below the floor
    assert.equal(groupAnchor([1, 2], scores, [1, 1, 1], none, 0.5), undefined);
    assert.equal(groupAnchor([1, 2], scores, [1, 1, 1], none, 0.3), 'csv');
  });

  it('when triage answered one of the group automatically, then the topic its hits point to is confirmed whatever the score', () => {
    const scores = [new Map([['pw', 0.2]]), new Map([['pw', 0.1]]), new Map([['csv', 0.3]])];
    assert.equal(groupAnchor([0, 1], scores, [1, 1, 1], [false, true, false], 0.5), 'pw');
    assert.equal(groupAnchor([0, 1], scores, [1, 1, 1], [false, false, false], 0.5), undefined);
    // The automatic answer confirms only a topic its own question retrieved.
    assert.equal(groupAnchor([0, 2], scores, [2, 1, 1], [false, false, true], 0.5), undefined);
  });

  it('when the questions have no KB hits, then the group has no KB topic', () => {
    assert.equal(groupAnchor([0, 1], [new Map(), new Map()], [1, 1], [true, true], 0.5), undefined);
  });
});

describe('clustering topics', () => {
  const lexical = new LexicalEmbeddings();
  const items = (texts: string[]) =>
    texts.map((text) => ({ vector: lexical.embedText(text), profile: new Map(), weight: 1 }));
  const options = { threshold: 0.3, kbWeight: 0 };

  it('when paraphrases of two questions are mixed with unrelated ones, then each paraphrase set is one topic', async () => {
    const texts = [
      CSV_EXPORT[0]!,
      PASSWORD_RESET[0]!,
      SINGLETONS[0]!,
      ...PASSWORD_RESET.slice(1),
      ...CSV_EXPORT.slice(1),
      SINGLETONS[1]!,
    ];
    const topics = await clusterTopics(items(texts), options);
    assert.deepEqual(
      topics.map((t) => t.members.map((i) => texts[i]).sort()),
      [[...PASSWORD_RESET].sort(), [...CSV_EXPORT].sort(), [SINGLETONS[0]], [SINGLETONS[1]]],
    );
    assert.deepEqual(
      topics.map((t) => t.size),
      [4, 3, 1, 1],
    );
  });

  it('when the input order changes, then the topics are the same', async () => {
    const texts = [...PASSWORD_RESET, ...CSV_EXPORT, ...SINGLETONS];
    const reversed = [...texts].reverse();
    const groups = async (t: string[]) =>
      (await clusterTopics(items(t), options))
        .map((g) =>
          g.members
            .map((i) => t[i])
            .sort()
            .join('|'),
        )
        .sort();
    assert.deepEqual(await groups(texts), await groups(reversed));
  });

  it('when questions share a confident KB answer but few words, then they are one topic', async () => {
    const a = {
      vector: [1, 0],
      profile: new Map([
        ['pw', 0.9],
        ['x', 0.1],
      ]),
      weight: 1,
    };
    const b = { vector: [0, 1], profile: new Map([['pw', 0.8]]), weight: 1 };
    // 0 + 2 · (0.9 · 0.8) = 1.44 ≥ 0.6
    assert.equal((await clusterTopics([a, b], { threshold: 0.6, kbWeight: 2 })).length, 1);
    assert.equal((await clusterTopics([a, b], { threshold: 0.6, kbWeight: 0 })).length, 2);
  });

  it('when two alike questions each confidently match a different KB answer, then they stay apart; alike questions without KB evidence merge', async () => {
    const alike = [0.8, 0.6];
    const topics = await clusterTopics(
      [
        {
          vector: [1, 0],
          profile: new Map([
            ['pw', 0.95],
            ['csv', 0.02],
          ]),
          weight: 1,
        },
        {
          vector: alike,
          profile: new Map([
            ['csv', 0.95],
            ['pw', 0.02],
          ]),
          weight: 1,
        },
      ],
      { threshold: 0.9, kbWeight: 2 },
    );
    // cos 0.8 + 2 · (0.95 · 0.02 + 0.02 · 0.95) = 0.876 < 0.9
    assert.equal(topics.length, 2);
    const unknown = await clusterTopics(
      [
        { vector: [1, 0], profile: new Map([['pw', 0.95]]), weight: 1 },
        { vector: [1, 0.05], profile: new Map(), weight: 3 },
      ],
      { threshold: 0.9, kbWeight: 2 },
    );
    assert.deepEqual(
      unknown.map((t) => t.size),
      [4],
      'a question without hits is compared by its text alone',
    );
  });

  it('when a week has more questions than the full clustering takes, then a leader pass pre-groups them and every question is in one topic', async () => {
    const n = 2_050;
    const many = Array.from({ length: n }, (_, i) => ({
      vector: i % 2 === 0 ? [1, 0, (i % 7) / 100] : [0, 1, (i % 5) / 100],
      profile: new Map(),
      weight: 1,
    }));
    const topics = await clusterTopics(many, { threshold: 0.9, kbWeight: 2 });
    assert.deepEqual(
      topics.map((t) => t.size),
      [n / 2, n / 2],
    );
    assert.equal(new Set(topics.flatMap((t) => t.members)).size, n);
  });
});

describe('grouping a week', () => {
  const lexical = new LexicalEmbeddings();
  const kb = [
    { entryId: 'pw-1', question: 'How can I reset my password?', answer: 'Use the reset link.' },
    { entryId: 'pw-2', question: 'How can I reset my password?', answer: 'Ask an admin.' },
  ];
  const knowledge: KnowledgeSearch = {
    async search(_org, query, limit) {
      const q = lexical.embedText(query);
      return kb
        .map((e) => ({ ...e, score: Math.max(0, dot(q, lexical.embedText(e.question))) }))
        .filter((h) => h.score > 0.05)
        .sort((x, y) => y.score - x.score || (x.entryId < y.entryId ? -1 : 1))
        .slice(0, limit);
    },
  };
  const grouping: GroupingSettings = {
    kbScoreFloor: 0.5,
    searchDepth: 10,
    thresholds: { override: undefined, lexical: 0.3, hashed: 0.6, dense: 0.5 },
    searchConcurrency: 2,
  };
  let id = 0;
  const tickets = (texts: string[]): WeekTicket[] =>
    texts.map((content) => ({
      ticketId: ++id,
      content,
      createdAt: new Date('2026-11-10T10:00:00Z'),
      category: null,
      status: 'open',
      answered: false,
      aiSummary: null,
      aiAnswer: null,
    }));

  it('when paraphrases of a KB question and of an unanswered one come in, then one topic is titled by the KB question and the other by its most central ticket', async () => {
    const week = await groupWeek(
      { embedder: lexical, knowledge, logger: testLogger },
      grouping,
      'acme',
      tickets([
        ...PASSWORD_RESET,
        ...CSV_EXPORT,
        PASSWORD_RESET[0]!,
        ' how do i reset my password ',
      ]),
    );
    assert.equal(week.kbChecked, true);
    assert.equal(week.threshold, 0.3, 'the lexical embeddings: their threshold');
    assert.equal(week.matchThreshold, 0.3, 'never above the clustering threshold');
    const [pw, csv] = week.topics;
    assert.equal(titleOf(pw!), 'How can I reset my password?');
    assert.equal(pw!.size, 6, 'identical texts count every ticket');
    assert.equal(pw!.anchor?.canonicalEntryId, 'pw-1');
    assert.equal(csv!.anchor, undefined);
    assert.equal(csv!.size, 3);
    assert.ok(CSV_EXPORT.includes(titleOf(csv!)));
  });

  it('when the KB cannot be searched, then the week is still grouped, by the embeddings alone', async () => {
    const down: KnowledgeSearch = {
      search: () => Promise.reject(new Error('down')),
    };
    const week = await groupWeek(
      { embedder: lexical, knowledge: down, logger: testLogger },
      grouping,
      'acme',
      tickets([...PASSWORD_RESET, ...CSV_EXPORT]),
    );
    assert.equal(week.kbChecked, false);
    assert.deepEqual(
      week.topics.map((t) => [t.anchor, t.size]),
      [
        [undefined, 4],
        [undefined, 3],
      ],
    );
  });
});

describe('topic identity and trends across weeks', () => {
  const unit = (x: number, y: number) => {
    const n = Math.hypot(x, y);
    return Float64Array.from([x / n, y / n]);
  };
  const previousTopic = (over: Partial<SummaryTopic>) =>
    summaryTopic({ id: 'kb:old', title: 'How can I reset my password?', tickets: 4, ...over });

  it('when a topic was there last week, then it keeps its id (by KB question, or by the most similar unanswered cluster); otherwise it gets a fresh one', () => {
    const previous = {
      topics: [
        previousTopic({}),
        previousTopic({ id: 'q:billing', title: 'Refund for a double charge', answered: false }),
        previousTopic({ id: 'q:far', title: 'Something else', answered: false }),
      ],
      vectors: [undefined, unit(1, 0.1), unit(0, 1)],
    };
    const { ids, predecessors } = assignTopicIds(
      [
        {
          kbKey: 'how can i reset my password',
          kbEntryId: 'pw-7',
          title: 'How can I reset my password?',
          centroid: undefined,
        },
        {
          kbKey: 'how do i export to csv',
          kbEntryId: 'csv-1',
          title: 'How do I export to CSV?',
          centroid: undefined,
        },
        {
          kbKey: undefined,
          kbEntryId: undefined,
          title: 'I was charged twice',
          centroid: unit(1, 0),
        },
        { kbKey: undefined, kbEntryId: undefined, title: 'Dark mode?', centroid: unit(1, -1) },
      ],
      previous,
      0.5,
    );
    assert.equal(ids[0], 'kb:old');
    assert.equal(ids[1], 'kb:csv-1');
    assert.equal(ids[2], 'q:billing');
    assert.match(ids[3]!, /^q:[0-9a-f]{12}$/);
    assert.equal(new Set(ids).size, 4);
    assert.deepEqual(
      predecessors.map((p) => p?.id),
      ['kb:old', undefined, 'q:billing', undefined],
    );
  });

  it('when the same unanswered text comes back with no history, then its id is the same as before', () => {
    const draft = {
      kbKey: undefined,
      kbEntryId: undefined,
      title: 'Dark mode?',
      centroid: unit(1, 0),
    };
    assert.deepEqual(
      assignTopicIds([draft], undefined, 0.5).ids,
      assignTopicIds([{ ...draft, title: ' dark mode ' }], undefined, 0.5).ids,
    );
  });

  it('when counts change, then the trend is new, rising, falling or steady; without last week, none', () => {
    assert.equal(trendOf(3, 0, true), 'new');
    assert.equal(trendOf(5, 2, true), 'rising');
    assert.equal(trendOf(3, 2, true), 'steady', 'one more is noise');
    assert.equal(trendOf(2, 6, true), 'falling');
    assert.equal(trendOf(12, 10, true), 'steady', 'less than half again');
    assert.equal(trendOf(3, 0, false), undefined);
  });
});
