// The digest service against real MariaDB and NATS JetStream, with a stand-in knowledge service:
// counting by ISO week, topics, answers, isolation, rebuilds, "latest", validation, fallbacks.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createTestDatabase } from '../../../test/support/mysql.js';
import { addDays, lastCompleteWeek, weekStartOf } from '../src/domain/iso-week.js';
import {
  assertAppError,
  CSV_EXPORT,
  EventPublisher,
  eventually,
  inWeek,
  newConsumerName,
  newOrg,
  PASSWORD_RESET,
  queryRows,
  requireEnv,
  SINGLETONS,
  startDigest,
  startKnowledgeStandIn,
  startLlmStandIn,
  ticketEvents,
  weekCounts,
  type KnowledgeStandIn,
  type RunningDigest,
  type TicketEventEnvelope,
} from './helpers.js';
import { stopAll } from '../../../test/support/testing.js';

describe('digest service (MySQL + JetStream)', () => {
  let db: Awaited<ReturnType<typeof createTestDatabase>>;
  let natsUrl: string;
  let publisher: EventPublisher;
  let knowledge: KnowledgeStandIn;
  let svc: RunningDigest;
  const orgA = newOrg('a');
  const orgB = newOrg('b');
  const orgC = newOrg('c');
  const orgD = newOrg('d');
  const lastWeek = lastCompleteWeek(new Date());
  const currentWeek = weekStartOf(new Date());
  const weekBefore = addDays(lastWeek, -7);
  let env: Record<string, string>;

  before(async () => {
    db = await createTestDatabase('digest');
    natsUrl = requireEnv('TEST_NATS_URL');
    publisher = await EventPublisher.connect(natsUrl);
    knowledge = await startKnowledgeStandIn([
      {
        orgId: orgA,
        id: 'kb-password',
        question: 'How can I reset my password?',
        answer:
          'Open the sign-in page and choose "Forgot password". We email you a reset link that is valid for one hour. Check your spam folder if it does not arrive.',
      },
      ...[orgC, orgD].map((orgId) => ({
        orgId,
        id: 'kb-password',
        question: 'How can I reset my password?',
        answer: 'Choose "Forgot password" on the sign-in page.',
      })),
      // Org B's KB must never answer org A's topics.
      {
        orgId: orgB,
        id: 'kb-csv',
        question: 'How do I export tickets to CSV?',
        answer: 'Use Reports → Export → CSV.',
      },
    ]);
    env = {
      MYSQL_URL: db.url,
      NATS_URL: natsUrl,
      DIGEST_CONSUMER_NAME: newConsumerName(),
      KNOWLEDGE_ADDR: knowledge.address,
      // The stand-in's vectors are lexical under a `hashed/…` fingerprint.
      DIGEST_TOPIC_THRESHOLD_HASHED: '0.35',
    };
    svc = await startDigest(env);
  });

  after(() => stopAll(svc, knowledge, publisher, db));

  async function publishAndWait(
    orgId: string,
    events: TicketEventEnvelope[],
    expected: Record<string, number>,
  ): Promise<void> {
    await publisher.publish(events);
    await eventually(
      async () => {
        const counts = await weekCounts(db.url, orgId);
        return Object.entries(expected).every(([w, n]) => counts[w] === n) ? counts : undefined;
      },
      15_000,
      `week counts ${JSON.stringify(expected)} for ${orgId}`,
    );
  }

  it('when an organization has no digest yet, then GetLatestDigest answers without one', async () => {
    const res = await svc.client.getLatestDigest({ orgId: newOrg() });
    assert.equal(res.digest, undefined);
  });

  it('when tickets were created in a week, then BuildDigest counts them exactly and groups paraphrases into topics', async () => {
    const events = [
      ...PASSWORD_RESET.flatMap((q, i) => ticketEvents(orgA, q, inWeek(lastWeek, i, 9 + i))),
      ...CSV_EXPORT.flatMap((q, i) =>
        ticketEvents(orgA, q, inWeek(lastWeek, 4, 8 + i), { answered: false }),
      ),
      ...ticketEvents(orgA, SINGLETONS[0]!, inWeek(lastWeek, 5), { answered: true }), // webhooks: answered automatically
      ...ticketEvents(orgA, SINGLETONS[1]!, inWeek(lastWeek, 5, 12)),
      // Week boundaries: the last millisecond of Sunday belongs to the week; Monday 00:00 does not.
      ...ticketEvents(
        orgA,
        'Does the mobile app work offline?',
        new Date(`${addDays(lastWeek, 6)}T23:59:59.999Z`),
      ),
      ...ticketEvents(
        orgA,
        'Can I change the invoice currency?',
        new Date(`${addDays(lastWeek, 7)}T00:00:00.000Z`),
      ),
      ...ticketEvents(
        orgA,
        'Where are the API docs?',
        new Date(`${addDays(lastWeek, -1)}T23:59:59.999Z`),
      ),
    ];
    await publishAndWait(orgA, events, {
      [lastWeek]: 10,
      [addDays(lastWeek, 7)]: 1,
      [weekBefore]: 1,
    });

    const embedCallsBefore = knowledge.embedCalls;
    const { digest } = await svc.client.buildDigest({ orgId: orgA, weekStart: lastWeek });
    assert.ok(digest);
    assert.equal(digest.orgId, orgA);
    assert.equal(digest.weekStart, lastWeek);
    assert.equal(digest.weekEnd, addDays(lastWeek, 6));
    assert.equal(digest.ticketCount, 10);
    assert.ok(!Number.isNaN(Date.parse(digest.generatedAt)));
    assert.ok(knowledge.embedCalls > embedCallsBefore, 'topics were embedded by knowledge');

    const md = digest.content;
    assert.match(
      md,
      new RegExp(`^# FAQ digest: ${lastWeek} to ${addDays(lastWeek, 6)} \\(\\d{4}-W\\d{2}\\)`),
    );
    assert.match(md, /\*\*Total tickets: 10\*\* \(10 tickets in 5 topics; last week 1 \(\+9\)\)/);
    // Topic 1: the four password paraphrases, titled and answered by their KB entry.
    assert.match(md, /### 1\. How can I reset my password\? \(4 tickets asked\)/);
    assert.match(md, /\*\*Answer:\*\* Open the sign-in page and choose "Forgot password"\./);
    assert.match(md, /_Source: knowledge-base entry “How can I reset my password\?”\._/);
    // Topic 2: the three CSV paraphrases, no KB entry (org B's does not count), no automatic answer.
    assert.match(md, /### 2\. [^\n]*CSV[^\n]* \(3 tickets asked\)/);
    const unanswered = md.slice(md.indexOf('## Unanswered topics — need a KB article'));
    assert.match(
      unanswered,
      /- [^\n]*CSV[^\n]* \(3 tickets a new article would have covered, new this week\)/,
    );
    assert.match(unanswered, /- Can I delete my account\? \(1 ticket a new article/);
    assert.match(unanswered, /- Does the mobile app work offline\? \(1 ticket a new article/);
    // The webhook question was answered automatically: listed with its answer, not as unanswered.
    assert.match(
      md,
      /Does the API support webhooks\?[^\n]*\n\n[^\n]*1 answered automatically \(100 %\)\n\n\*\*Answer:\*\*[^\n]*\n\n_Source: automatic answer sent to 1 of 1 ticket/,
    );
    // The same digest as data.
    const summary = digest.summary!;
    assert.equal(summary.lastWeekTicketCount, 1);
    assert.equal(summary.groupedTickets, 10);
    assert.equal(summary.answeredAutomatically, 1);
    const [pw, csv] = summary.topics;
    assert.deepEqual(
      [pw!.id, pw!.title, pw!.answered, pw!.tickets, pw!.trend, pw!.answer?.kbEntryId],
      ['kb:kb-password', 'How can I reset my password?', true, 4, 'new', 'kb-password'],
    );
    assert.equal(pw!.ticketIds.length, 4);
    assert.deepEqual([csv!.answered, csv!.tickets, csv!.answer], [false, 3, undefined]);
    assert.match(csv!.id, /^q:[0-9a-f]{12}$/);
    assert.doesNotMatch(unanswered, /webhooks|password|invoice currency|API docs/);
  });

  it('when another organization has tickets in the same week, then neither sees the other', async () => {
    await publishAndWait(
      orgB,
      CSV_EXPORT.flatMap((q, i) => ticketEvents(orgB, q, inWeek(lastWeek, 2, 9 + i))),
      { [lastWeek]: 3 },
    );
    assert.equal((await svc.client.getLatestDigest({ orgId: orgB })).digest, undefined);

    const b = (await svc.client.buildDigest({ orgId: orgB, weekStart: lastWeek })).digest!;
    assert.equal(b.ticketCount, 3);
    assert.match(b.content, /Use Reports → Export → CSV\./);
    assert.doesNotMatch(b.content, /password/i);

    const a = (await svc.client.getLatestDigest({ orgId: orgA })).digest!;
    assert.equal(a.ticketCount, 10);
    assert.doesNotMatch(a.content, /Use Reports/);
  });

  it('when a week is rebuilt after more tickets arrived, then the new digest replaces the old one', async () => {
    const first = (await svc.client.getLatestDigest({ orgId: orgA })).digest!;
    await publishAndWait(
      orgA,
      ['I cannot reset my password', 'Reset password link expired'].flatMap((q) =>
        ticketEvents(orgA, q, inWeek(lastWeek, 6, 20)),
      ),
      { [lastWeek]: 12 },
    );
    const rebuilt = (await svc.client.buildDigest({ orgId: orgA, weekStart: lastWeek })).digest!;
    assert.equal(rebuilt.ticketCount, 12);
    assert.match(rebuilt.content, /### 1\. [^\n]*password[^\n]* \(6 tickets asked\)/i);
    assert.ok(rebuilt.generatedAt >= first.generatedAt);
    const latest = (await svc.client.getLatestDigest({ orgId: orgA })).digest!;
    assert.deepEqual(latest, rebuilt);
    const rows = await queryRows<{ n: number }>(
      db.url,
      'SELECT COUNT(*) AS n FROM digests WHERE org_id = ? AND week_start = ?',
      [orgA, lastWeek],
    );
    assert.equal(Number(rows[0]!.n), 1);
  });

  it('when the latest digest is asked for without its summary, then it is the same digest with no summary', async () => {
    const full = (await svc.client.getLatestDigest({ orgId: orgA })).digest!;
    assert.ok(full.summary && full.summary.topics.length > 0);
    const lean = (await svc.client.getLatestDigest({ orgId: orgA, withoutSummary: true })).digest!;
    assert.equal(lean.summary, undefined);
    assert.deepEqual(lean, { ...full, summary: undefined });
  });

  it('when an older week is built after a newer one, then the latest digest is still the newest week', async () => {
    const older = (await svc.client.buildDigest({ orgId: orgA, weekStart: weekBefore })).digest!;
    assert.equal(older.ticketCount, 1);
    const latest = (await svc.client.getLatestDigest({ orgId: orgA })).digest!;
    assert.equal(latest.weekStart, lastWeek);
    assert.equal(latest.ticketCount, 12);
  });

  it('when the current week is built, then it is a partial digest and becomes the latest', async () => {
    const partial = (await svc.client.buildDigest({ orgId: orgA, weekStart: currentWeek })).digest!;
    assert.equal(partial.weekStart, currentWeek);
    assert.match(partial.content, /_Partial: built before the end of the week/);
    assert.equal(
      (await svc.client.getLatestDigest({ orgId: orgA })).digest!.weekStart,
      currentWeek,
    );
    assert.equal(partial.ticketCount, (await weekCounts(db.url, orgA))[currentWeek] ?? 0);
  });

  it('when week_start is omitted, then the last complete week is built', async () => {
    const built = (await svc.client.buildDigest({ orgId: orgB })).digest!;
    assert.equal(built.weekStart, lastWeek);
    assert.equal(built.ticketCount, 3);
  });

  it('when a week had no tickets, then its digest says so with a count of 0', async () => {
    const empty = (await svc.client.buildDigest({ orgId: orgB, weekStart: addDays(lastWeek, -70) }))
      .digest!;
    assert.equal(empty.ticketCount, 0);
    assert.match(empty.content, /No tickets were created this week\./);
  });

  it('when week_start or org_id is invalid, then the call fails with invalid_request naming the parameter', async () => {
    await assertAppError(
      svc.client.buildDigest({ orgId: orgA, weekStart: '2026-13-01' }),
      'invalid_request',
      'week_start',
    );
    await assertAppError(
      svc.client.buildDigest({ orgId: orgA, weekStart: addDays(lastWeek, 1) }),
      'invalid_request',
      'week_start',
    );
    await assertAppError(
      svc.client.buildDigest({ orgId: orgA, weekStart: addDays(currentWeek, 7) }),
      'invalid_request',
      'week_start',
    );
    await assertAppError(svc.client.buildDigest({ orgId: ' ' }), 'invalid_request', 'org_id');
    await assertAppError(svc.client.getLatestDigest({ orgId: '' }), 'invalid_request', 'org_id');
  });

  it("when a second week is built after the first, then new, rising and falling topics and both weeks' counts show, with stable topic ids", async () => {
    const refund = [
      'I was charged twice this month',
      'Why was my card charged twice?',
      'Charged twice for one invoice',
    ];
    const offline = ['Does the mobile app work offline?', 'Can I use the mobile app offline?'];
    const weekOne = [
      ...PASSWORD_RESET.slice(0, 2).map((q, i) => [q, i] as const),
      ...refund.map((q, i) => [q, 2 + i] as const),
      ...offline.map((q, i) => [q, 5 + i] as const),
    ];
    const weekTwo = [
      ...[...PASSWORD_RESET, 'I cannot reset my password', 'Reset password link expired'].map(
        (q, i) => [q, i] as const,
      ),
      [refund[0]!, 6] as const,
      ...CSV_EXPORT.map((q, i) => [q, 3 + i] as const),
    ];
    for (const org of [orgC, orgD]) {
      await publishAndWait(
        org,
        [
          ...weekOne.flatMap(([q, day]) => ticketEvents(org, q, inWeek(weekBefore, day))),
          ...weekTwo.flatMap(([q, day]) => ticketEvents(org, q, inWeek(lastWeek, day))),
        ],
        { [weekBefore]: 7, [lastWeek]: 10 },
      );
    }
    const first = (await svc.client.buildDigest({ orgId: orgC, weekStart: weekBefore })).digest!;
    const second = (await svc.client.buildDigest({ orgId: orgC, weekStart: lastWeek })).digest!;
    const one = first.summary!;
    const two = second.summary!;
    assert.equal(
      one.lastWeekTicketCount,
      undefined,
      'no tickets the week before: nothing to compare',
    );
    assert.ok(one.topics.every((t) => t.trend === undefined));
    assert.equal(two.lastWeekTicketCount, 7);

    const byTitle = (topics: typeof two.topics, pattern: RegExp) => {
      const found = topics.filter((t) => pattern.test(t.title));
      assert.equal(found.length, 1, `${pattern}: ${JSON.stringify(topics.map((t) => t.title))}`);
      return found[0]!;
    };
    const pw = byTitle(two.topics, /password/i);
    assert.deepEqual(
      [pw.id, pw.tickets, pw.lastWeekTickets, pw.trend],
      ['kb:kb-password', 6, 2, 'rising'],
    );
    assert.equal(byTitle(one.topics, /password/i).id, pw.id);
    const csv = byTitle(two.topics, /CSV/);
    assert.deepEqual(
      [csv.answered, csv.tickets, csv.lastWeekTickets, csv.trend],
      [false, 3, 0, 'new'],
    );
    // An unanswered topic keeps its id: this week's cluster is matched to last week's.
    const charged = byTitle(two.topics, /charged/i);
    assert.equal(charged.id, byTitle(one.topics, /charged/i).id);
    assert.deepEqual([charged.tickets, charged.lastWeekTickets, charged.trend], [1, 3, 'falling']);
    assert.ok(!two.topics.some((t) => /offline/i.test(t.title)), 'gone this week');

    const md = second.content;
    const changed = md.slice(md.indexOf('## What changed'), md.indexOf('## Top topics'));
    assert.ok(
      md.indexOf('## What changed') > 0 &&
        md.indexOf('## What changed') < md.indexOf('## Top topics'),
    );
    assert.match(changed, /\*\*New:\*\* [^\n]*CSV[^\n]* \(3 tickets\)/);
    assert.match(
      changed,
      /\*\*Rising:\*\* How can I reset my password\? \(6 tickets, last week 2\)/,
    );
    assert.match(changed, /\*\*Falling:\*\* [^\n]*charged[^\n]* \(1 ticket, last week 3\)/i);
    assert.match(md, /\*\*Total tickets: 10\*\* \(10 tickets in 3 topics; last week 7 \(\+3\)\)/);

    // Rebuilding changes nothing but the build time.
    const again = (await svc.client.buildDigest({ orgId: orgC, weekStart: lastWeek })).digest!;
    assert.deepEqual({ ...again, generatedAt: '' }, { ...second, generatedAt: '' });
    // Without a stored digest of the week before, it is grouped again for the comparison.
    const unbuilt = (await svc.client.buildDigest({ orgId: orgD, weekStart: lastWeek })).digest!;
    assert.deepEqual(
      unbuilt.summary!.topics.map((t) => [t.title, t.tickets, t.lastWeekTickets, t.trend]),
      two.topics.map((t) => [t.title, t.tickets, t.lastWeekTickets, t.trend]),
    );
    const rows = await queryRows<{ summary: string | null }>(
      db.url,
      'SELECT summary FROM digests WHERE org_id = ? AND week_start = ?',
      [orgC, lastWeek],
    );
    assert.equal(JSON.parse(rows[0]!.summary!).topics.length, 3, 'stored with the digest');
  });

  it('when the knowledge service is down, then topics fall back to the lexical embeddings and the KB is reported unchecked', async () => {
    const replica = await startDigest({
      ...env,
      KNOWLEDGE_ADDR: '127.0.0.1:1',
      GRPC_DEADLINE_MS: '500',
    });
    try {
      const d = (await replica.client.buildDigest({ orgId: orgA, weekStart: lastWeek })).digest!;
      assert.equal(d.ticketCount, 12);
      assert.match(d.content, /### 1\. [^\n]*password[^\n]* \(6 tickets asked\)/i);
      assert.match(d.content, /### 2\. [^\n]*CSV[^\n]* \(3 tickets asked\)/);
      assert.match(
        d.content,
        /_The knowledge base could not be checked when this digest was built\._/,
      );
      assert.doesNotMatch(d.content.slice(d.content.indexOf('## Unanswered')), /^- /m);
    } finally {
      await replica.stop();
    }
  });

  it('when an LLM is configured, then topic answers are summarized, and its errors or timeouts fall back to the extractive answers', async () => {
    const ok = await startLlmStandIn('ok');
    const failing = await startLlmStandIn('error');
    const hanging = await startLlmStandIn('hang');
    try {
      for (const [llm, expectSummary] of [
        [ok, true],
        [failing, false],
        [hanging, false],
      ] as const) {
        const replica = await startDigest({
          ...env,
          OPENAI_BASE_URL: llm.baseURL,
          DIGEST_LLM_TIMEOUT_MS: '500',
          DIGEST_MODEL: 'test-model',
        });
        try {
          const started = Date.now();
          const d = (await replica.client.buildDigest({ orgId: orgA, weekStart: lastWeek }))
            .digest!;
          assert.ok(Date.now() - started < 5_000);
          assert.ok(llm.requests >= 1);
          if (expectSummary) {
            assert.match(d.content, /\*\*Answer:\*\* LLM summary for topic 1\./);
            assert.match(
              d.content,
              /knowledge-base entry “How can I reset my password\?” \(summarized\)/,
            );
          } else {
            assert.match(d.content, /\*\*Answer:\*\* Open the sign-in page/);
            assert.doesNotMatch(d.content, /summarized/);
          }
        } finally {
          await replica.stop();
        }
      }
    } finally {
      await Promise.all([ok.stop(), failing.stop(), hanging.stop()]);
    }
  });
});
