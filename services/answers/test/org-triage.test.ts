// Each organization's own triage through the answers service's gRPC API (embedded mode): uploads
// refused with a clear error and nothing changed, training runs in a child process, isolation
// between organizations, people's corrections from ticket events, a failed run.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { callUnary, createGrpcClient, createLogger, type AppError } from '@support-agent/shared';
import { answers } from '@support-agent/proto';
import { EmbeddedTriageStore } from '../src/data-access/embedded-triage-store.js';
import type { TriageStore } from '../src/domain/org-triage/ports.js';
import { TrainingRunner } from '../src/entry-points/jobs/training-runner.js';
import { appendEvent, ticketCreated } from './support/events.js';
import { ACCESS_WORDS, BILLING_WORDS, labelledTickets } from './support/labelled.js';
import {
  rejection,
  startAnswers,
  testEnv,
  waitFor,
  type RunningAnswers,
} from './support/service.js';
import { KnowledgeStub, TicketsStub } from './support/stubs.js';
import { stopAll } from '../../../test/support/testing.js';

let knowledge: KnowledgeStub;
let tickets: TicketsStub;
let svc: RunningAnswers;
let triage: answers.TriageServiceClient;
let env: Record<string, string>;
const call = { timeoutMs: 20_000 };

before(async () => {
  knowledge = new KnowledgeStub();
  tickets = new TicketsStub();
  env = testEnv({
    KNOWLEDGE_ADDR: await knowledge.start(),
    TICKETS_ADDR: await tickets.start(),
    TRIAGE_MODEL_REFRESH_MS: '200',
    // Nice 0: on a busy test machine a run at 19 may wait minutes for idle CPU.
    TRIAGE_TRAINING_NICE: '0',
  });
  svc = await startAnswers(env);
  triage = createGrpcClient(answers.TriageServiceClient, `127.0.0.1:${svc.server.port}`);
});

after(async () => {
  triage?.close();
  await stopAll(svc, knowledge, tickets);
});

const status = (orgId: string) => callUnary(triage.getTriageStatus.bind(triage), { orgId }, call);
const setCategories = (orgId: string, categories: string[]) =>
  callUnary(triage.setTriageCategories.bind(triage), { orgId, categories }, call);

let uploads = 0;
/** Uploads rows as the gateway does: staged in batches, then committed. */
async function upload(
  orgId: string,
  rows: { text: string; label: string; id?: string }[],
  batch = 50,
): Promise<answers.CommitTriageUploadResponse> {
  const uploadId = `upload-test-${++uploads}`;
  for (let i = 0; i < rows.length; i += batch)
    await callUnary(
      triage.stageTriageExamples.bind(triage),
      {
        orgId,
        uploadId,
        examples: rows
          .slice(i, i + batch)
          .map((r, j) => ({ line: i + j + 1, id: r.id ?? '', ...r })),
      },
      call,
    );
  return callUnary(
    triage.commitTriageUpload.bind(triage),
    { orgId, uploadId, replace: false },
    call,
  );
}

async function trainAndWait(orgId: string, activate = true): Promise<answers.TriageTrainingJob> {
  let job = await callUnary(triage.startTriageTraining.bind(triage), { orgId, activate }, call);
  await waitFor(
    async () => {
      job = await callUnary(
        triage.getTriageTrainingJob.bind(triage),
        { orgId, jobId: job.id },
        call,
      );
      return job.state === 'succeeded' || job.state === 'failed';
    },
    300_000,
    'the training run',
  );
  return job;
}

const classify = (orgId: string, content: string) =>
  callUnary(svc.client.classifyTicket.bind(svc.client), { content, orgId }, call);

const examplesHeld = async (orgId: string) =>
  (await status(orgId)).examples.reduce((s, e) => s + e.uploaded + e.corrections, 0);

describe('uploads of labelled tickets', () => {
  test('when categories are not 2 to 50 distinct names, then they are refused', async () => {
    for (const bad of [
      ['one'],
      ['a', 'A'],
      ['ok', 'bad!'],
      Array.from({ length: 51 }, (_, i) => `c${i}`),
    ]) {
      const err = await rejection(setCategories('up-org', bad));
      assert.equal(err.code, 'invalid_request', bad.join(','));
    }
  });

  test('when a row is labelled outside the categories, then the upload is refused naming the line and the allowed labels, and nothing changes', async () => {
    await setCategories('up-org', ['billing', 'access']);
    const rows = labelledTickets({ billing: BILLING_WORDS, access: ACCESS_WORDS }, 5);
    await upload('up-org', rows);
    const before = await examplesHeld('up-org');
    const bad = [...rows.slice(0, 3), { text: 'my card was charged twice', label: 'Billing' }];
    const err = (await rejection(upload('up-org', bad, 2))) as AppError;
    assert.equal(err.code, 'invalid_request');
    assert.match(
      err.message,
      /line 4: label "Billing" is not one of the organization's categories \(billing, access\); did you mean "billing"\?/,
    );
    assert.equal(await examplesHeld('up-org'), before);
  });

  test('when an upload is empty or holds one category only, then it is refused and nothing changes', async () => {
    const before = await examplesHeld('up-org');
    const empty = await rejection(
      callUnary(
        triage.commitTriageUpload.bind(triage),
        { orgId: 'up-org', uploadId: 'nothing-staged', replace: false },
        call,
      ),
    );
    assert.match(empty.message, /holds no labelled tickets/);
    const one = await rejection(
      upload('up-org', [
        { text: 'refund please', label: 'billing' },
        { text: 'another invoice', label: 'billing' },
      ]),
    );
    assert.match(one.message, /at least two categories/);
    const blank = await rejection(upload('up-org', [{ text: '   ', label: 'billing' }]));
    assert.match(blank.message, /line 1: the ticket text is empty/);
    assert.equal(await examplesHeld('up-org'), before);
  });
});

describe('training and isolation', () => {
  test('when two organizations train on contradicting labels, then each classifies by its own and the built-in one serves everyone else', async () => {
    const topics = { billing: BILLING_WORDS, access: ACCESS_WORDS };
    await setCategories('org-a', ['billing', 'access']);
    await setCategories('org-b', ['billing', 'access']);
    await upload('org-a', labelledTickets(topics, 20));
    // Organization B labels the same kinds of ticket the other way round.
    await upload(
      'org-b',
      labelledTickets(topics, 20, 2).map((r) => ({
        ...r,
        label: r.label === 'billing' ? 'access' : 'billing',
      })),
    );
    const [a, b] = [await trainAndWait('org-a'), await trainAndWait('org-b')];
    assert.equal(a.state, 'succeeded', a.error);
    assert.equal(b.state, 'succeeded', b.error);
    assert.equal(a.version, 1);
    assert.deepEqual(
      a.report?.categories.map((c) => c.category),
      ['billing', 'access'],
    );
    assert.ok(a.report!.macroF1 > 0.9, `cross-validated macro-F1 ${a.report!.macroF1}`);
    await waitFor(
      async () => (await classify('org-a', 'refund')).modelVersion === 1,
      10_000,
      'org-a model',
    );
    await waitFor(
      async () => (await classify('org-b', 'refund')).modelVersion === 1,
      10_000,
      'org-b model',
    );

    const text = 'I was charged twice: where is the refund for this invoice?';
    assert.equal((await classify('org-a', text)).category, 'billing');
    assert.equal((await classify('org-b', text)).category, 'access');
    const other = await classify('org-c', text);
    assert.equal(other.modelVersion, 0);
    assert.ok(
      ['bug', 'feature_request', 'documentation', 'how_to', 'general_question'].includes(
        other.category,
      ),
    );

    // A new ticket of org-a is triaged into org-a's own category.
    appendEvent(join(env.DATA_DIR!, 'events', 'tickets.jsonl'), ticketCreated('org-a', 501, text));
    await waitFor(
      () => tickets.calls.some((c) => c.request.ticketId === 501),
      10_000,
      'triage of 501',
    );
    assert.equal(
      tickets.calls.find((c) => c.request.ticketId === 501)!.request.category,
      'billing',
    );
  });

  test('when a version is activated or rolled back, then classification follows', async () => {
    await trainAndWait('org-a', false);
    const versions = await callUnary(
      triage.listTriageModelVersions.bind(triage),
      { orgId: 'org-a' },
      call,
    );
    assert.deepEqual(
      versions.versions.map((v) => [v.version, v.active]),
      [
        [2, false],
        [1, true],
      ],
    );
    await callUnary(
      triage.activateTriageModelVersion.bind(triage),
      { orgId: 'org-a', version: 0 },
      call,
    );
    await waitFor(
      async () => (await classify('org-a', 'refund')).modelVersion === 0,
      10_000,
      'built-in',
    );
    const back = await callUnary(triage.rollbackTriageModel.bind(triage), { orgId: 'org-a' }, call);
    assert.equal(back.activeVersion, 1);
    await waitFor(
      async () => (await classify('org-a', 'refund')).modelVersion === 1,
      10_000,
      'version 1',
    );
    const unknown = await rejection(
      callUnary(
        triage.activateTriageModelVersion.bind(triage),
        { orgId: 'org-a', version: 9 },
        call,
      ),
    );
    assert.equal(unknown.code, 'not_found');
  });

  test("when a person changes a ticket's category, then the label joins the training set and, past the threshold, a run starts", async () => {
    await callUnary(
      triage.setTriageAutoRetrain.bind(triage),
      { orgId: 'org-a', afterCorrections: 2, activate: false },
      call,
    );
    const before = (await status('org-a')).latestJob!.id;
    const file = join(env.DATA_DIR!, 'events', 'tickets.jsonl');
    const changed = (ticketId: number, id: string) => ({
      id,
      type: 'tickets.category_changed',
      version: 1,
      org_id: 'org-a',
      ticket_id: ticketId,
      occurred_at: new Date().toISOString(),
      data: { from: 'billing', to: 'access', content: 'my invoice page asks for a password' },
    });
    appendEvent(file, changed(900, 'cc-1'));
    appendEvent(file, changed(900, 'cc-1')); // a redelivery counts once
    await waitFor(
      async () => (await status('org-a')).correctionsSinceLastRun === 1,
      10_000,
      'a correction',
    );
    const access = (await status('org-a')).examples.find((e) => e.category === 'access')!;
    assert.equal(access.corrections, 1);
    appendEvent(file, changed(901, 'cc-2'));
    await waitFor(
      async () => (await status('org-a')).latestJob!.id !== before,
      10_000,
      'an automatic run',
    );
    const job = (await status('org-a')).latestJob!;
    assert.equal(job.trigger, 'corrections');
    assert.equal((await status('org-a')).correctionsSinceLastRun, 0);
  });
});

describe('a training run that fails', () => {
  test('when the run cannot train, then it is recorded as failed and the active model stays', async () => {
    const logger = createLogger('test', 'silent');
    const store: TriageStore = EmbeddedTriageStore.open(
      join(mkdtempSync(join(tmpdir(), 'triage-fail-')), 'answers'),
      logger,
    );
    const now = () => new Date();
    const runner = new TrainingRunner({
      store,
      logger,
      now,
      pollMs: 100,
      leaseMs: 60_000,
      timeoutMs: 120_000,
      maxMemoryMb: 256,
      nice: 0,
      activated: () => {},
    });
    runner.start();
    try {
      const rows = labelledTickets({ billing: BILLING_WORDS, access: ACCESS_WORDS }, 10);
      await store.setCategories('f', ['billing', 'access'], now());
      await store.stage(
        'f',
        'u1',
        rows.map((r, i) => ({ line: i + 1, key: `k${i}`, ...r })),
        now(),
      );
      await store.commitUpload('f', 'u1', false, now());
      await store.createJob({
        id: 'good',
        orgId: 'f',
        trigger: 'manual',
        activate: true,
        now: now(),
      });
      await waitFor(
        async () => (await store.job('f', 'good'))?.state === 'succeeded',
        120_000,
        'v1',
      );
      // The categories change under the training set: the next run finds one category only.
      await store.setCategories('f', ['billing', 'refunds'], now());
      await store.createJob({
        id: 'bad',
        orgId: 'f',
        trigger: 'manual',
        activate: true,
        now: now(),
      });
      await waitFor(
        async () => (await store.job('f', 'bad'))?.state === 'failed',
        120_000,
        'failure',
      );
      assert.match((await store.job('f', 'bad'))!.error!, /at least 2/);
      assert.equal((await store.settings('f')).activeVersion, 1);
      assert.deepEqual(
        (await store.versions('f')).map((v) => v.version),
        [1],
      );
    } finally {
      await runner.stop();
      await store.close();
    }
  });
});
