// The learners behind the reranker and the confidence models: listwise ranking, logistic
// regression, and cross-validation folds that keep a group together.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { fitListwise, fitLogistic, groupFolds } from '@support-agent/quality';

describe('fitting', () => {
  test('when relevance follows one feature, then the listwise ranker weighs it positively and ignores noise', () => {
    let seed = 42;
    const random = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
    const lists = Array.from({ length: 60 }, () => {
      const x = Array.from({ length: 8 }, () => [random(), random()]);
      const best = x.reduce((b, v, i) => (v[0]! > x[b]![0]! ? i : b), 0);
      return { x, relevant: x.map((_, i) => i === best) };
    });
    const [signal, noise] = fitListwise(lists);
    assert.ok(signal! > 3 * Math.abs(noise!), `weights ${signal}, ${noise}`);
  });

  test('when outcomes follow a feature, then logistic regression recovers the sign', () => {
    const samples = Array.from({ length: 200 }, (_, i) => {
      const x = (i % 20) / 20;
      return { x: [x], y: (x > 0.5 ? 1 : 0) as 0 | 1, group: String(i % 7) };
    });
    const fitted = fitLogistic(samples, { l2: 0.1 });
    assert.ok(fitted.weights[0]! > 1);
  });

  test('when folds are assigned, then every group lies in exactly one fold and all folds are used', () => {
    const groups = Array.from({ length: 50 }, (_, i) => `t${i % 10}`);
    const folds = groupFolds(groups, 5);
    assert.equal(folds.size, 10);
    assert.deepEqual([...new Set(folds.values())].sort(), [0, 1, 2, 3, 4]);
  });

  test('when a sample weighs 2 and the penalty is negligible, then it counts as that sample twice', () => {
    const base = Array.from({ length: 40 }, (_, i) => ({
      x: [(i % 10) / 10, (i % 3) / 3],
      y: ((i * 7) % 10 > 4 ? 1 : 0) as 0 | 1,
      group: String(i),
    }));
    const twice = fitLogistic([...base, base[0]!], { l2: 1e-9 });
    const weighted = fitLogistic([{ ...base[0]!, weight: 2 }, ...base.slice(1)], { l2: 1e-9 });
    for (let j = 0; j < 2; j++)
      assert.ok(Math.abs(twice.weights[j]! - weighted.weights[j]!) < 1e-6);
    assert.ok(Math.abs(twice.bias - weighted.bias) < 1e-6);
  });

  test('when the same groups are folded twice with one seed, then the folds are the same', () => {
    const groups = Array.from({ length: 30 }, (_, i) => `t${i % 12}`);
    assert.deepEqual([...groupFolds(groups, 4, 7)], [...groupFolds(groups, 4, 7)]);
  });

  test('when a list has no relevant candidate, then it teaches the ranker nothing', () => {
    const informative = [{ x: [[1], [0]], relevant: [true, false] }];
    const useless = { x: [[0], [1]], relevant: [false, false] };
    assert.deepEqual(fitListwise([...informative, useless]), fitListwise(informative));
  });
});
