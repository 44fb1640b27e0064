import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import {
  ANSWER_FEATURES,
  answerConfidence,
  answerFeatures,
  checkConfidenceModel,
  CONFIDENCE_MODEL,
  RELEVANCE_FLOOR,
} from '../src/domain/confidence.js';
import { anyRelevant, relevantHits } from '../src/domain/generate-answer.js';
import type { AnswerDraft, KbHit } from '../src/domain/ports.js';

const hit = (entryId: string, score: number, question = `Question ${entryId}?`): KbHit => ({
  entryId,
  question,
  answer: 'Open Settings, then Security, and choose Reset password.',
  score,
});
const cites = (...ids: string[]): AnswerDraft => ({
  answer: 'x',
  answeredFully: true,
  citedEntryIds: ids,
  support: null,
});

describe('calibrated confidence', () => {
  test('when the shipped model is loaded, then it has known features and a relevance floor that is a probability', () => {
    assert.deepEqual(
      CONFIDENCE_MODEL.features.filter((f) => !(ANSWER_FEATURES as readonly string[]).includes(f)),
      [],
    );
    assert.ok(RELEVANCE_FLOOR > 0 && RELEVANCE_FLOOR < 1, `floor ${RELEVANCE_FLOOR}`);
  });

  test('when the cited entry is more likely to answer, then confidence never goes down', () => {
    let previous = -1;
    for (let p = 0.2; p <= 1.0001; p += 0.05) {
      const c = answerConfidence([hit('a', Math.min(1, p)), hit('b', 0.1)], cites('a'));
      assert.ok(c >= previous, `confidence ${c} at score ${p.toFixed(2)} after ${previous}`);
      previous = c;
    }
    assert.ok(previous >= 90, `a certain hit gives ${previous}`);
  });

  test('when the cited entry is a near-certain match, then confidence is high, and low for a weak one', () => {
    assert.ok(answerConfidence([hit('a', 0.99)], cites('a')) >= 90);
    assert.ok(answerConfidence([hit('a', 0.25)], cites('a')) <= 40);
  });

  test('when nothing is cited or no draft was written, then confidence is 0', () => {
    assert.equal(answerConfidence([hit('a', 0.9)], cites()), 0);
    assert.equal(answerConfidence([hit('a', 0.9)], null), 0);
    assert.equal(answerConfidence([], null), 0);
  });

  test('when an LLM reports low support, then confidence is at most that support', () => {
    const hits = [hit('a', 0.99)];
    const high = answerConfidence(hits, cites('a'));
    assert.equal(answerConfidence(hits, { ...cites('a'), support: 40 }), Math.min(high, 40));
    assert.equal(answerConfidence(hits, { ...cites('a'), support: 100 }), high);
  });

  test('when features are computed, then rivals are hits with another question and the cited one is excluded', () => {
    const f = answerFeatures(
      [hit('a', 0.9, 'Same?'), hit('b', 0.8, 'Same?'), hit('c', 0.3, 'Other?')],
      'a',
      0.2,
    );
    assert.equal(f.otherRelevant, 2);
    assert.ok(Math.abs(f.rivalLogit - Math.log(0.3 / 0.7)) < 1e-9);
    assert.ok(Math.abs(f.citedLogit - Math.log(0.9 / 0.1)) < 1e-9);
  });

  test('when a model file is malformed, then loading it fails with a clear message', () => {
    assert.throws(
      () =>
        checkConfidenceModel({ features: ['nope'], weights: [1], bias: 0, relevanceFloor: 0.2 }),
      /known features/,
    );
    assert.throws(
      () =>
        checkConfidenceModel({
          features: ['citedLogit'],
          weights: [1],
          bias: 0,
          relevanceFloor: 1.5,
        }),
      /relevanceFloor/,
    );
  });
});

describe('relevant hits', () => {
  test('when hits score at least the floor and share a word with the question, then they are relevant, in ranking order', () => {
    const hits = [hit('a', 0.9, 'How do I reset my password?'), hit('b', 0.5, 'Reset 2FA?')];
    assert.deepEqual(
      relevantHits(hits, 'reset password').map((h) => h.entryId),
      ['a', 'b'],
    );
  });

  test('when a hit is below the floor or shares no word with the question, then it is not offered', () => {
    const low = hit('low', RELEVANCE_FLOOR / 2, 'How do I reset my password?');
    const unrelated: KbHit = {
      entryId: 'csv',
      question: 'How do I export tickets to CSV?',
      answer: 'Choose Export in the Tickets view.',
      score: 0.6,
    };
    assert.deepEqual(relevantHits([unrelated, low], 'Do you support teleportation of pets?'), []);
    assert.equal(anyRelevant([unrelated, low], 'Do you support teleportation of pets?'), false);
  });
});
