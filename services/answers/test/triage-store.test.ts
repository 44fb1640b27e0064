// The TriageStore port: the MySQL adapter (on the test MariaDB) and the embedded one pass the
// same cases.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createLogger } from '@support-agent/shared';
import { EmbeddedTriageStore } from '../src/data-access/embedded-triage-store.js';
import { MysqlTriageStore } from '../src/data-access/mysql-triage-store.js';
import { TriageStoreConflict, type TriageStore } from '../src/domain/org-triage/ports.js';
import type { TrainingReport } from '../src/domain/org-triage/train-org-model.js';
import { createTestDatabase } from '../../../test/support/mysql.js';

const logger = createLogger('test', 'silent');
const REPORT: TrainingReport = {
  examples: 4,
  folds: 2,
  l2: 0.003,
  macroF1: 0.5,
  accuracy: 0.5,
  categories: [],
  confusion: [],
};
const at = (s: number) => new Date(Date.UTC(2026, 10, 1, 12, 0, s));
const row = (line: number, key: string, label: string) => ({
  line,
  key,
  text: `text ${key}`,
  label,
});

let n = 0;
const org = () => `org-${++n}`;

function contract(
  name: string,
  open: () => Promise<TriageStore>,
  reopen?: () => Promise<TriageStore>,
) {
  describe(`triage store: ${name}`, () => {
    let store: TriageStore;
    before(async () => {
      store = await open();
    });
    after(() => store.close());

    test('when an upload is staged and committed, then all its rows join at once and a repeated key is one example', async () => {
      const o = org();
      await store.stage(o, 'up-1', [row(1, 'a', 'x'), row(2, 'b', 'y')], at(0));
      await store.stage(o, 'up-1', [row(3, 'a', 'y')], at(1));
      assert.deepEqual(await store.exampleCounts(o), []);
      assert.deepEqual(await store.commitUpload(o, 'up-1', false, at(2)), { added: 2, updated: 0 });
      const examples = await store.examples(o);
      assert.deepEqual(
        examples.map((e) => [e.key, e.label, e.source]),
        [
          ['a', 'y', 'upload'],
          ['b', 'y', 'upload'],
        ],
      );
      assert.deepEqual(await store.staged(o, 'up-1'), []);
    });

    test('when an upload is discarded, then nothing of it is added; with replace, older uploads go and corrections stay', async () => {
      const o = org();
      await store.stage(o, 'up-2', [row(1, 'a', 'x'), row(2, 'b', 'y')], at(0));
      await store.commitUpload(o, 'up-2', false, at(0));
      assert.equal(await store.recordCorrection(o, 7, 'a ticket', 'x', 'ev-1', at(1)), true);
      await store.stage(o, 'up-3', [row(1, 'zzz', 'x')], at(2));
      await store.discardUpload(o, 'up-3');
      assert.equal((await store.examples(o)).length, 3);
      await store.stage(o, 'up-4', [row(1, 'c', 'x'), row(2, 'a', 'y')], at(3));
      assert.deepEqual(await store.commitUpload(o, 'up-4', true, at(3)), { added: 2, updated: 0 });
      assert.deepEqual(
        (await store.examples(o)).map((e) => e.key),
        ['a', 'c', 'ticket:7'],
      );
    });

    test('when a correction event comes twice, then it counts once and a later label of the ticket replaces it', async () => {
      const o = org();
      assert.equal(await store.recordCorrection(o, 1, 'ticket one', 'x', 'ev-a', at(0)), true);
      assert.equal(await store.recordCorrection(o, 1, 'ticket one', 'x', 'ev-a', at(1)), false);
      assert.equal(await store.recordCorrection(o, 1, 'ticket one', 'y', 'ev-b', at(2)), true);
      assert.deepEqual(await store.exampleCounts(o), [
        { label: 'y', source: 'correction', count: 1 },
      ]);
      assert.equal((await store.settings(o)).correctionsSinceRun, 2);
    });

    test("when a job runs, then one at a time per organization, its lease is its owner's, and success makes an activated version atomically", async () => {
      const o = org();
      await store.setCategories(o, ['x', 'y'], at(0));
      await store.recordCorrection(o, 1, 't', 'x', `ev-${o}`, at(0));
      const job = await store.createJob({
        id: `j-${o}`,
        orgId: o,
        trigger: 'manual',
        activate: true,
        now: at(0),
      });
      assert.equal((await store.settings(o)).correctionsSinceRun, 0);
      await assert.rejects(
        store.createJob({
          id: `j2-${o}`,
          orgId: o,
          trigger: 'manual',
          activate: false,
          now: at(0),
        }),
        TriageStoreConflict,
      );
      let claimed = await store.claimJob('w1', 60_000, at(1));
      while (claimed && claimed.id !== job.id) claimed = await store.claimJob('w1', 60_000, at(1));
      assert.equal(claimed?.state, 'running');
      assert.equal(await store.heartbeat(job.id, 'w2', 'x', 0.5, 60_000, at(2)), false);
      assert.equal(await store.heartbeat(job.id, 'w1', 'fold 1', 0.5, 60_000, at(2)), true);
      assert.equal((await store.job(o, job.id))?.phase, 'fold 1');
      assert.equal(await store.job('other-org', job.id), undefined);
      const done = await store.finishJob(
        job.id,
        'w1',
        { kind: 'succeeded', model: '{"m":1}', categories: ['x', 'y'], report: REPORT },
        at(3),
      );
      assert.equal(done?.state, 'succeeded');
      assert.equal(done?.version, 1);
      assert.equal(done?.activated, true);
      assert.equal((await store.settings(o)).activeVersion, 1);
      assert.equal(await store.model(o, 1), '{"m":1}');
      assert.equal((await store.activeVersions()).get(o), 1);
    });

    test('when a job fails, then the active version stays; when its replica dies, another takes it up', async () => {
      const o = org();
      await store.setCategories(o, ['x', 'y'], at(0));
      const first = await store.createJob({
        id: `k1-${o}`,
        orgId: o,
        trigger: 'manual',
        activate: true,
        now: at(0),
      });
      while ((await store.claimJob('w', 60_000, at(0)))?.id !== first.id);
      await store.finishJob(
        first.id,
        'w',
        { kind: 'succeeded', model: 'v1', categories: ['x', 'y'], report: REPORT },
        at(1),
      );
      const second = await store.createJob({
        id: `k2-${o}`,
        orgId: o,
        trigger: 'manual',
        activate: true,
        now: at(2),
      });
      while ((await store.claimJob('dead', 1_000, at(2)))?.id !== second.id);
      // The lease lapses: another worker takes the run up.
      let again = await store.claimJob('w', 60_000, at(10));
      while (again && again.id !== second.id) again = await store.claimJob('w', 60_000, at(10));
      assert.equal(again?.attempts, 2);
      assert.equal(
        await store.finishJob(second.id, 'dead', { kind: 'failed', error: 'late' }, at(11)),
        undefined,
      );
      const failed = await store.finishJob(
        second.id,
        'w',
        { kind: 'failed', error: 'no memory' },
        at(11),
      );
      assert.equal(failed?.state, 'failed');
      assert.equal(failed?.error, 'no memory');
      assert.equal((await store.settings(o)).activeVersion, 1);
      assert.deepEqual(
        (await store.versions(o)).map((v) => v.version),
        [1],
      );
    });

    test('when versions are activated, then the one before is what a rollback finds, and an unknown version is refused', async () => {
      const o = org();
      await store.setCategories(o, ['x', 'y'], at(0));
      for (const id of [`v1-${o}`, `v2-${o}`]) {
        await store.createJob({ id, orgId: o, trigger: 'manual', activate: false, now: at(0) });
        while ((await store.claimJob('w', 60_000, at(0)))?.id !== id);
        await store.finishJob(
          id,
          'w',
          { kind: 'succeeded', model: id, categories: ['x', 'y'], report: REPORT },
          at(1),
        );
      }
      assert.equal((await store.settings(o)).activeVersion, 0);
      assert.equal(await store.activate(o, 2, at(2)), true);
      assert.equal(await store.activate(o, 1, at(3)), true);
      assert.deepEqual(
        [(await store.settings(o)).activeVersion, (await store.settings(o)).previousVersion],
        [1, 2],
      );
      assert.equal(await store.activate(o, 9, at(4)), false);
      assert.equal(await store.activate(o, 0, at(5)), true);
      assert.equal((await store.activeVersions()).has(o), false);
    });

    if (reopen)
      test('when the store is opened again, then what was recorded is there', async () => {
        const o = org();
        await store.setCategories(o, ['p', 'q'], at(0));
        await store.stage(o, 'up-r', [row(1, 'a', 'p'), row(2, 'b', 'q')], at(0));
        await store.commitUpload(o, 'up-r', false, at(0));
        await store.close();
        store = await reopen();
        assert.deepEqual((await store.settings(o)).categories, ['p', 'q']);
        assert.equal((await store.examples(o)).length, 2);
      });
  });
}

let drop: (() => Promise<void>) | undefined;
after(() => drop?.());
contract('MySQL', async () => {
  const db = await createTestDatabase('triage');
  drop = db.drop;
  return MysqlTriageStore.open(db.url, logger);
});
const dir = mkdtempSync(join(tmpdir(), 'triage-store-'));
contract(
  'embedded',
  async () => EmbeddedTriageStore.open(join(dir, 'answers'), logger),
  async () => EmbeddedTriageStore.open(join(dir, 'answers'), logger),
);
