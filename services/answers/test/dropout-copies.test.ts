// Dropout augmentation of an organization's training run (dropout-copies.ts). Pure functions.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { toSparse } from '../src/domain/org-triage/fit-softmax.js';
import { withDropoutCopies } from '../src/domain/org-triage/dropout-copies.js';
import { trainOrgModel } from '../src/domain/org-triage/train-org-model.js';
import { loadTriageModel } from '../src/domain/triage-model.js';

const rows = Array.from(
  { length: 50 },
  (_, i) => new Map(Array.from({ length: 40 }, (_, f) => [(i + f) % 97, 0.5] as [number, number])),
);
const data = toSparse(
  rows,
  rows.map((_, i) => i % 3),
);

describe('dropout copies', () => {
  test('when copies are made, then the rows come first unchanged and each copy keeps about 1 − rate of its features, scaled up', () => {
    const out = withDropoutCopies(data, 2, 0.3, 1);
    assert.equal(out.y.length, 150);
    assert.deepEqual(Array.from(out.ptr.slice(0, 51)), Array.from(data.ptr));
    assert.deepEqual(Array.from(out.idx.slice(0, data.idx.length)), Array.from(data.idx));
    assert.deepEqual(Array.from(out.y.slice(50, 100)), Array.from(data.y));
    const copied = out.idx.length - data.idx.length;
    const share = copied / (2 * data.idx.length);
    assert.ok(share > 0.65 && share < 0.75, `kept share ${share}`);
    for (let j = data.idx.length; j < out.idx.length; j++)
      assert.ok(Math.abs(out.val[j]! - 0.5 / 0.7) < 1e-6);
    // Every copied feature is one its row has.
    for (let r = 50; r < 150; r++) {
      const own = new Set(rows[r % 50]!.keys());
      for (let j = out.ptr[r]!; j < out.ptr[r + 1]!; j++) assert.ok(own.has(out.idx[j]!));
    }
  });

  test('when the seed is the same, then so are the copies; no copies leaves the data as it is', () => {
    const a = withDropoutCopies(data, 1, 0.3, 5);
    const b = withDropoutCopies(data, 1, 0.3, 5);
    assert.deepEqual(Array.from(a.idx), Array.from(b.idx));
    assert.notDeepEqual(Array.from(withDropoutCopies(data, 1, 0.3, 6).idx), Array.from(a.idx));
    assert.equal(withDropoutCopies(data, 0, 0.3, 5), data);
    assert.throws(() => withDropoutCopies(data, 1, 1, 5), /rate/);
  });

  test('when a training set is larger than the limit, then the run trains without copies, and says so in the model', () => {
    const builtin = loadTriageModel();
    const examples = Array.from({ length: 12 }, (_, i) => ({
      text: i % 2 ? `The app crashes with an error ${i}` : `Please add an option to export ${i}`,
      label: i % 2 ? 'bug' : 'wish',
    }));
    const meta = (max: number) =>
      trainOrgModel(examples, ['bug', 'wish'], builtin, { folds: 0, dropoutMaxExamples: max }).model
        .meta;
    assert.equal(meta(12)?.dropoutCopies, 2);
    assert.equal(meta(11)?.dropoutCopies, 0);
  });
});
