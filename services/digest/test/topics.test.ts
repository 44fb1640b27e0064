// Domain units: anchoring questions on KB entries, clustering the rest, grouping a week, and
// topic identity / trends across weeks.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { clusterTopics } from '../src/domain/cluster-topics.js';
import type { SummaryTopic } from '../src/domain/digest-summary.js';
import { groupWeek, titleOf, type GroupingSettings } from '../src/domain/group-week.js';
import { anchorQuestions, groupAnchor, weekPriorAnchors } from '../src/domain/kb-anchoring.js';
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
const question = (hits: KbHit[] | undefined, weight = 1, autoAnswered = false) => ({
  hits,
  weight,
  autoAnswered,
});
const RESET = 'How do I reset my password?';
const EXPORT = 'How do I export to CSV?';
const settings = { floor: 0.7, temperature: 0.1 };

describe('anchoring questions on KB entries', () => {
  it('when a paraphrase matches another entry slightly better, then the week prior anchors it with its siblings', () => {
    const a = anchorQuestions(
      [
        question([hit('pw', RESET, 0.9)]),
        question([hit('pw', RESET, 0.8), hit('csv', EXPORT, 0.3)], 3),
        question([hit('csv', EXPORT, 0.55), hit('pw', RESET, 0.5)]),
      ],
      settings,
    );
    assert.deepEqual(
      a.anchored.map((t) => [t.question, t.members]),
      [[RESET, [0, 1, 2]]],
    );
    assert.deepEqual(a.leftovers, []);
  });

  it('when the week has no sibling to agree with, then the best hit is the anchor', () => {
    assert.deepEqual(
      weekPriorAnchors(
        [
          new Map([
            ['a', 0.5],
            ['b', 0.45],
          ]),
        ],
        [1],
        0.1,
      ),
      ['a'],
    );
  });

  it('when entries share a KB question, then they are one topic whose id entry is the smallest id', () => {
    const a = anchorQuestions(
      [
        question([hit('pw-2', RESET, 0.9), hit('pw-1', RESET, 0.6)]),
        question([hit('pw-3', RESET, 0.8)]),
      ],
      settings,
    );
    assert.equal(a.anchored.length, 1);
    assert.equal(a.anchored[0]!.canonicalEntryId, 'pw-1');
    assert.equal(a.anchored[0]!.best.entryId, 'pw-2', 'the best-matching entry answers');
  });

  it('when one question matches weakly, then it is left over; when two match weakly together, then their evidence confirms the topic', () => {
    const alone = anchorQuestions([question([hit('pw', RESET, 0.5)])], settings);
    assert.deepEqual(alone.anchored, []);
    assert.deepEqual(alone.leftovers, [0]);
    // 1 − (1 − 0.5)(1 − 0.5) = 0.75 ≥ 0.7
    const together = anchorQuestions(
      [question([hit('pw', RESET, 0.5)]), question([hit('pw', RESET, 0.5)])],
      settings,
    );
    assert.deepEqual(together.anchored[0]?.members, [0, 1]);
  });

  it('when triage answered a ticket automatically, then its anchor is confirmed whatever the score', () => {
    const a = anchorQuestions([question([hit('pw', RESET, 0.2)], 1, true)], settings);
    assert.deepEqual(a.anchored[0]?.members, [0]);
  });

  it('when a question matches a confirmed topic below half the floor, then it does not join', () => {
    const a = anchorQuestions(
      [question([hit('pw', RESET, 0.9)]), question([hit('pw', RESET, 0.3)])],
      settings,
    );
    assert.deepEqual(a.anchored[0]?.members, [0]);
    assert.deepEqual(a.leftovers, [1]);
  });

  it('when the KB could not be searched, then nothing is anchored', () => {
    const a = anchorQuestions([question(undefined), question(undefined)], settings);
    assert.deepEqual(a.anchored, []);
    assert.deepEqual(a.leftovers, [0, 1]);
  });

  it('when a group of questions points to one KB topic together, then groupAnchor names it only at the floor', () => {
    const candidates = [
      new Map([['pw', 0.5]]),
      new Map([
        ['pw', 0.5],
        ['csv', 0.4],
      ]),
    ];
    assert.equal(groupAnchor([0, 1], candidates, 0.7), 'pw');
    assert.equal(groupAnchor([0], candidates, 0.7), undefined);
  });
});

describe('clustering topics', () => {
  const lexical = new LexicalEmbeddings();
  const items = (texts: string[]) =>
    texts.map((text) => ({ vector: lexical.embedText(text), profile: new Map(), weight: 1 }));
  const singles = (n: number) =>
    Array.from({ length: n }, (_, i) => ({ members: [i], anchored: false }));
  const options = { threshold: 0.3, profileWeight: 0 };

  it('when paraphrases of two questions are mixed with unrelated ones, then each paraphrase set is one topic', async () => {
    const texts = [
      CSV_EXPORT[0]!,
      PASSWORD_RESET[0]!,
      SINGLETONS[0]!,
      ...PASSWORD_RESET.slice(1),
      ...CSV_EXPORT.slice(1),
      SINGLETONS[1]!,
    ];
    const topics = await clusterTopics(items(texts), singles(texts.length), options);
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
      (await clusterTopics(items(t), singles(t.length), options))
        .map((g) =>
          g.members
            .map((i) => t[i])
            .sort()
            .join('|'),
        )
        .sort();
    assert.deepEqual(await groups(texts), await groups(reversed));
  });

  it('when two anchored groups are alike, then they stay apart, and a similar unanchored question joins one', async () => {
    const v = [1, 0];
    const topics = await clusterTopics(
      [
        { vector: v, profile: new Map(), weight: 1 },
        { vector: v, profile: new Map(), weight: 1 },
        { vector: [0.95, 0.05], profile: new Map(), weight: 2 },
      ],
      [
        { members: [0], anchored: true },
        { members: [1], anchored: true },
        { members: [2], anchored: false },
      ],
      options,
    );
    assert.equal(topics.length, 2);
    assert.deepEqual(topics.map((t) => t.seed).sort(), [0, 1]);
    assert.equal(topics[0]!.size, 3, 'the unanchored question (weight 2) joined an anchored group');
  });

  it('when questions share KB hits but few words, then the hit profiles bring them together', async () => {
    const a = {
      vector: [1, 0],
      profile: new Map([
        ['pw', 0.9],
        ['x', 0.1],
      ]),
      weight: 1,
    };
    const b = { vector: [0, 1], profile: new Map([['pw', 0.8]]), weight: 1 };
    assert.equal(
      (await clusterTopics([a, b], singles(2), { threshold: 0.3, profileWeight: 0.5 })).length,
      1,
    );
    assert.equal(
      (await clusterTopics([a, b], singles(2), { threshold: 0.3, profileWeight: 0 })).length,
      2,
    );
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
    kbScoreFloor: 0.7,
    searchDepth: 10,
    anchorTemperature: 0.1,
    profileWeight: 0.5,
    thresholds: { override: undefined, lexical: 0.3, hashed: 0.3, dense: 0.5 },
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
