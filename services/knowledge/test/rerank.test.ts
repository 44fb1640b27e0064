// The second search stage (reranking + calibrated scores) and the script that fits it (its
// learners are in @support-agent/quality).
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { promisify } from 'node:util';
import { checkConfidenceModel } from '@support-agent/answers/confidence';
import { bestOf, competitionRanks } from '../src/domain/first-stage.js';
import { calibrated, checkRerankModel, competitorGaps, GAP_CAP } from '../src/domain/rerank.js';
import { RERANK_MODEL } from '../src/domain/rerank-model.js';
import { QueryWords } from '../src/domain/question-match.js';
import { gramCounts } from '../src/domain/term-grams.js';
import { QuestionVocabulary, questionTermsIn, termsOf } from '../src/domain/question-vocabulary.js';
import { isStopword, words as tokenWords } from '../src/domain/tokenizer.js';
import { ENTRIES, tempDir } from './support/fixtures.js';
import { mulberry32 } from '@support-agent/shared';

describe('reranking', () => {
  test('when values tie, then they share a competition rank', () => {
    const values = Float64Array.of(0.5, 0.9, 0.5, 0.1);
    assert.deepEqual(Array.from(competitionRanks(values)), [2, 1, 2, 4]);
    assert.deepEqual(Array.from(competitionRanks(values, [3, 0])), [4, 2]);
  });

  test('when ranks are asked for any values, then each is 1 + the number of strictly larger values', () => {
    const random = mulberry32(7);
    for (let run = 0; run < 200; run++) {
      // Few distinct values, so ties are common (−0 among them, equal to 0), and now and then a
      // NaN, larger than nothing; the values asked for may repeat.
      const value = (x: number) => (x < 0.05 ? NaN : x < 0.1 ? -0 : Math.floor(random() * 8) / 8);
      const values = Float64Array.from({ length: 1 + Math.floor(random() * 60) }, () =>
        value(random()),
      );
      const of = Array.from({ length: Math.floor(random() * 25) }, () =>
        Math.floor(random() * values.length),
      );
      const expected = of.map((i) => 1 + values.filter((v) => v > values[i]!).length);
      assert.deepEqual(Array.from(competitionRanks(values, of)), expected, `run ${run}`);
    }
  });

  test('when the best candidates are picked, then the largest scores come first, ties by id, at most depth', () => {
    const scores = Float64Array.of(0.5, 0.9, 0.5, 0.1, 0.7);
    const ids = ['d', 'a', 'b', 'c', 'e'];
    assert.deepEqual(
      bestOf(scores, (i) => ids[i]!, 3),
      [1, 4, 2],
    );
    assert.deepEqual(
      bestOf(scores, (i) => ids[i]!, 9),
      [1, 4, 2, 0, 3],
    );
    assert.deepEqual(
      bestOf(scores, (i) => ids[i]!, 0),
      [],
    );
  });

  test('when question words are compared by character trigrams, then the score is the cosine of the trigram counts of the words joined', () => {
    // Reference: count the sliced trigrams of the joined words' content words, then the cosine.
    const grams = (words: string[]) => {
      const out = new Map<string, number>();
      for (const w of tokenWords(words.join(' '))) {
        if (isStopword(w)) continue;
        const padded = `<${w}>`;
        for (let i = 0; i + 3 <= padded.length; i++)
          out.set(padded.slice(i, i + 3), (out.get(padded.slice(i, i + 3)) ?? 0) + 1);
      }
      return out;
    };
    const cosine = (a: Map<string, number>, b: Map<string, number>) => {
      let dot = 0;
      for (const [k, v] of a) dot += v * (b.get(k) ?? 0);
      const norm = (m: Map<string, number>) =>
        Math.sqrt([...m.values()].reduce((s, v) => s + v * v, 0));
      return a.size === 0 || b.size === 0 ? 0 : dot / (norm(a) * norm(b));
    };
    const query = ['export', 'csv', 'café', 'our'];
    const questions = [
      ['export', 'csv', 'file'],
      ['exporting', 'caf', 'naïve', '日本語', '🙂ok'],
      ['our'],
      [],
      ['csv', 'csv', 'ccc', 'cccc'],
    ];
    // Questions from two vocabularies, each compared twice (the second time from the query's
    // memo), and a second query comparing in between with the same vocabularies (its lookups
    // overwrite the first one's scratch).
    const vocabularies = [new QuestionVocabulary(), new QuestionVocabulary()];
    const words = new QueryWords(query);
    const other = new QueryWords(['file', 'csv']);
    for (const round of [0, 1])
      questions.forEach((q, i) => {
        const question = questionTermsIn(vocabularies[(i + round) % 2]!, q);
        assert.deepEqual(termsOf(question), q);
        const expected = cosine(grams(query), grams(q));
        const held = new Uint8Array(query.length);
        const got = words.charsCosine(words.compare(question, held), gramCounts(q).norm2);
        assert.ok(Math.abs(got - expected) < 1e-15, `${q.join(' ')}: ${got} vs ${expected}`);
        assert.deepEqual(
          Array.from(held),
          query.map((t) => (q.includes(t) ? 1 : 0)),
          `${q.join(' ')}: query terms held`,
        );
        assert.equal(words.shared, q.filter((t) => query.includes(t)).length);
        other.compare(question, new Uint8Array(2));
        assert.equal(other.shared, q.filter((t) => t === 'file' || t === 'csv').length);
      });
    // A query term that enters the vocabulary after the query first compared with it.
    const late = new QuestionVocabulary();
    const query2 = new QueryWords(['invoice', 'later']);
    query2.compare(questionTermsIn(late, ['invoice']), new Uint8Array(2));
    const held = new Uint8Array(2);
    query2.compare(questionTermsIn(late, ['later', 'invoice']), held);
    assert.deepEqual(Array.from(held), [1, 1]);
    assert.equal(query2.shared, 2);
  });

  test('when answers share a question, then they do not compete with each other', () => {
    const gaps = competitorGaps([
      { question: 'A', score: 3 },
      { question: 'A', score: 2.5 },
      { question: 'B', score: 1 },
    ]);
    assert.deepEqual(gaps, [2, 1.5, -2]);
    assert.deepEqual(competitorGaps([{ question: 'A', score: 1 }]), [GAP_CAP]);
  });

  test('when any rows compete, then each gap is its score minus the best score of another question, capped', () => {
    const random = mulberry32(11);
    for (let run = 0; run < 200; run++) {
      const rows = Array.from({ length: Math.floor(random() * 12) }, () => ({
        question: Math.floor(random() * 4),
        score: Math.floor(random() * 16) / 2 - 4,
      }));
      const expected = rows.map((r) => {
        const others = rows.filter((o) => o.question !== r.question).map((o) => o.score);
        if (others.length === 0) return GAP_CAP;
        return Math.min(GAP_CAP, Math.max(-GAP_CAP, r.score - Math.max(...others)));
      });
      assert.deepEqual(competitorGaps(rows), expected, JSON.stringify(rows));
    }
  });

  test('when the shipped model is loaded, then its calibration keeps the ranker order (monotone in score and gap)', () => {
    for (const stage of [RERANK_MODEL.hybrid, RERANK_MODEL.lexicalOnly]) {
      assert.ok(stage.calibration.score >= 0 && stage.calibration.gap > 0);
      let previous = 0;
      for (let s = -2; s <= 2; s += 0.25) {
        const p = calibrated(stage, s, s);
        assert.ok(p >= previous && p > 0 && p < 1, `p ${p} at ${s}`);
        previous = p;
      }
    }
  });

  test('when a model file is malformed, then loading it fails with a clear message', () => {
    assert.throws(() => checkRerankModel({ depth: 0 }), /depth/);
    const stage = {
      ranker: { features: ['lexical', 'nope'], weights: [1, 1] },
      calibration: { bias: 0, score: 1, gap: 1 },
    };
    assert.throws(
      () => checkRerankModel({ depth: 20, hybrid: stage, lexicalOnly: stage }),
      /known features/,
    );
  });
});

describe('fitting the models', () => {
  test('when the fitting script runs on a tiny labelled file, then it writes models that load', async () => {
    const dir = tempDir('fit-confidence-');
    try {
      const corpus = ENTRIES.map((e, i) => ({
        faq_id: e.id,
        thread_id: `t${i}`,
        question: e.question,
        answer: e.answer,
      }));
      const asked: [string, string][] = [
        ['reset-password', 'I forgot my password, how do I get a new one?'],
        ['reset-password', 'password reset link'],
        ['export-csv', 'export tickets as a spreadsheet'],
        ['export-csv', 'can I download my tickets in csv'],
        ['delete-account', 'close my account for good'],
        ['delete-account', 'how to remove the account'],
        ['invite-teammates', 'add a colleague to the workspace'],
        ['invite-teammates', 'invite people by email'],
        ['api-rate-limits', 'how many API calls per minute'],
        ['api-rate-limits', 'I get 429 errors from the API'],
        ['two-factor', 'enable 2FA with an authenticator app'],
        ['billing-invoices', 'where are my invoices as PDF'],
      ];
      const queries = asked.map(([id, text], i) => ({
        query_id: `q${i}`,
        thread_id: corpus.find((c) => c.faq_id === id)!.thread_id,
        text,
      }));
      const qrels = asked.map(([id], i) => ({ query_id: `q${i}`, faq_id: id, relevance: 1 }));
      const write = (name: string, rows: unknown[]) => {
        writeFileSync(join(dir.path, name), rows.map((r) => JSON.stringify(r)).join('\n'));
        return join(dir.path, name);
      };
      const files = [
        write('corpus.jsonl', corpus),
        write('queries.jsonl', queries),
        write('qrels.jsonl', qrels),
      ];
      const { stdout } = await promisify(execFile)(
        process.execPath,
        [
          '--import',
          'tsx',
          'scripts/fit-confidence.ts',
          ...files,
          '--folds',
          '3',
          '--out',
          dir.path,
        ],
        { cwd: new URL('../../..', import.meta.url).pathname },
      );
      assert.match(stdout, /cross-validated by group/);
      const read = (name: string) => JSON.parse(readFileSync(join(dir.path, name), 'utf8'));
      const rerank = checkRerankModel(read('rerank-model.json'));
      assert.equal(rerank.depth, 20);
      const confidence = checkConfidenceModel(read('confidence-model.json'));
      assert.ok(confidence.relevanceFloor > 0);
    } finally {
      dir.remove();
    }
  });
});
