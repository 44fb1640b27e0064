// Scores of a classifier on labelled examples (the triage evaluation's table).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { classScores } from '@support-agent/quality';

const CLASSES = ['bug', 'feature', 'question'] as const;

describe('classification scores', () => {
  it('when predictions are scored, then precision, recall, F1 and the confusion matrix follow the counts', () => {
    const gold = ['bug', 'bug', 'bug', 'feature', 'feature', 'question'] as const;
    const predicted = ['bug', 'bug', 'feature', 'feature', 'question', 'question'] as const;
    const s = classScores(CLASSES, [...gold], [...predicted]);
    assert.deepEqual(s.confusion, {
      bug: { bug: 2, feature: 1, question: 0 },
      feature: { bug: 0, feature: 1, question: 1 },
      question: { bug: 0, feature: 0, question: 1 },
    });
    assert.deepEqual(s.perClass.bug, { precision: 1, recall: 2 / 3, f1: 0.8, support: 3 });
    assert.equal(s.perClass.feature.precision, 0.5);
    assert.equal(s.perClass.question.recall, 1);
    assert.equal(s.accuracy, 4 / 6);
    const f1s = CLASSES.map((c) => s.perClass[c].f1);
    assert.ok(Math.abs(s.macroF1 - (f1s[0]! + f1s[1]! + f1s[2]!) / 3) < 1e-12);
  });

  it('when a class is never predicted nor present, then it scores 0 instead of NaN', () => {
    const s = classScores(CLASSES, ['bug', 'feature'], ['bug', 'feature']);
    assert.deepEqual(s.perClass.question, { precision: 0, recall: 0, f1: 0, support: 0 });
    assert.equal(s.accuracy, 1);
    assert.ok(Math.abs(s.macroF1 - 2 / 3) < 1e-12);
  });

  it('when there are no examples, then accuracy is 0, not NaN', () => {
    assert.equal(classScores(CLASSES, [], []).accuracy, 0);
  });
});
