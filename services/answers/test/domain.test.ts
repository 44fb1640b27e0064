// Unit tests of the domain: classifier, priority rules, summaries, confidence, extractive answers.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { APIConnectionTimeoutError, APIError } from 'openai';
import { CircuitBreaker, CircuitOpenError } from '../src/data-access/circuit-breaker.js';
import { ExtractiveModel, trimToQuestion } from '../src/data-access/extractive-llm.js';
import { retryDelay } from '../src/data-access/openai-llm.js';
import { checkModel, classify, featurize, softmax } from '../src/domain/classifier.js';
import { checkGrounded, requireQuestion } from '../src/domain/generate-answer.js';
import { monthOf, secondsUntilNextMonth } from '../src/domain/month.js';
import type { KbHit } from '../src/domain/ports.js';
import { priorityFor } from '../src/domain/priority-rules.js';
import { oneSentence, summarize } from '../src/domain/summary.js';
import { handFeatures } from '../src/domain/triage-features.js';
import { loadTriageModel, loadWordVectors } from '../src/domain/triage-model.js';
import { decodeWordVectors, meanVector } from '../src/domain/word-vectors.js';
import { codePointLength, termSet } from '../src/domain/text.js';

const model = loadTriageModel();
const hit = (
  entryId: string,
  score: number,
  answer = 'An answer.',
  question = 'A question?',
): KbHit => ({
  entryId,
  question,
  answer,
  score,
});

describe('classifier', () => {
  const cases: Array<[string, string]> = [
    ['bug', 'Export to CSV fails with a 500 error since this morning. It worked last week.'],
    [
      'bug',
      'TypeError: Cannot read properties of undefined (reading "id")\n    at render (app.js:10:5)\n\nThe page is blank after login.',
    ],
    [
      'bug',
      'Steps to reproduce:\n1. Open settings\n2. Click save\n\nExpected: the name is saved.\nActual: the old name comes back.',
    ],
    [
      'feature_request',
      'It would be great if we could schedule reports to be emailed every Monday.',
    ],
    ['feature_request', 'Feature request: please add support for SAML single sign-on with Okta.'],
    ['how_to', 'How do I add a new team member to my workspace?'],
    ['how_to', 'Is there a way to export all my contacts to a spreadsheet?'],
    ['general_question', 'Do you offer a discount for non-profit organizations?'],
    ['general_question', 'Is my data stored in the EU?'],
    [
      'documentation',
      'The API docs for the orders endpoint are outdated: the example uses a parameter that was removed.',
    ],
    ['documentation', 'Typo in the getting started guide, step 3 says "recieve".'],
  ];
  for (const [expected, text] of cases) {
    test(`when the ticket reads "${text.slice(0, 50).replace(/\n/g, ' ')}…", then it is ${expected}`, () => {
      assert.equal(classify(model, text).category, expected);
    });
  }

  test('when a text is classified, then the probabilities cover the five categories and sum to 1', () => {
    const { probabilities } = classify(model, 'The app crashes on start.');
    assert.deepEqual(Object.keys(probabilities).sort(), [
      'bug',
      'documentation',
      'feature_request',
      'general_question',
      'how_to',
    ]);
    assert.ok(Math.abs(Object.values(probabilities).reduce((a, b) => a + b, 0) - 1) < 1e-9);
  });

  test('when a text is classified, then the probabilities are those of the features training sees', () => {
    // classify() reads hashed buckets from a flat array; training names them `c:<bucket>`.
    const text =
      'Crash when saving\n\nThe editor crashes every time I save a file larger than 2 MB.\n\n```\nTypeError: x is undefined\n```';
    const scores = [...model.bias];
    for (const [name, value] of featurize(text, model.features, model.wordVectors)) {
      const w = model.weights[name];
      if (w) w.forEach((x, k) => (scores[k]! += value * x));
    }
    const expected = softmax(scores);
    const { probabilities } = classify(model, text);
    model.classes.forEach((c, k) => assert.ok(Math.abs(probabilities[c] - expected[k]!) < 1e-12));
  });

  test('when the same text is classified twice, then the result is identical (deterministic)', () => {
    const text = 'Why does the sync take so long for big accounts?';
    assert.deepEqual(classify(model, text), classify(model, text));
  });

  test('when a text has a stack trace and expected/actual sections, then the hand features see them', () => {
    const f = handFeatures(
      'Crash on save\n\nTraceback (most recent call last):\n  File "a.py", line 3, in <module>\nKeyError: 1\n\nExpected behavior: saved. Actual behavior: crash.',
    );
    assert.equal(f['h:stack_trace'], 1);
    assert.equal(f['h:expected_actual'], 1);
    assert.equal(f['h:title_bug'], 1);
  });

  test('when a text is huge, then featurizing it stays bounded and fast', () => {
    const started = Date.now();
    const v = featurize('word '.repeat(200_000), model.features, model.wordVectors);
    const sparse = [...v.keys()].filter((name) => !name.startsWith('e:'));
    assert.ok(sparse.length < 100, `size ${sparse.length}`);
    assert.ok(Date.now() - started < 1_000);
  });

  test('when the model file is malformed, then checkModel refuses it', () => {
    const features = { leadWords: 30, chars: null };
    assert.throws(() => checkModel({ version: 3 }));
    assert.throws(() =>
      checkModel({ version: 1, classes: ['bug'], features, bias: [0], weights: {} }),
    );
    assert.throws(() =>
      checkModel({ version: 2, classes: ['bug'], features, bias: [0, 0], weights: {} }),
    );
    assert.throws(() =>
      checkModel({ version: 2, classes: ['bug'], features, bias: [0], weights: { x: [1, 2] } }),
    );
    assert.throws(() =>
      checkModel({
        version: 2,
        classes: ['bug'],
        features: { leadWords: 30, chars: { min: 3, max: 2, buckets: 8 } },
        bias: [0],
        weights: {},
      }),
    );
    assert.throws(() =>
      checkModel({ version: 2, classes: ['bug'], features, bias: [0], weights: { 'c:3': [1] } }),
    );
    assert.throws(() =>
      checkModel({ version: 2, classes: ['bug'], features, bias: [0], weights: { 'e:t0': [1] } }),
    );
    assert.throws(() =>
      checkModel({
        version: 2,
        classes: ['bug'],
        features: { ...features, vectors: { scale: -1, words: 10 } },
        bias: [0],
        weights: {},
      }),
    );
    assert.doesNotThrow(() =>
      checkModel({ version: 2, classes: ['bug'], features, bias: [0], weights: { x: [1] } }),
    );
  });

  test('when a model reads word vectors but none are attached, then classifying fails clearly', () => {
    const { wordVectors: _, ...bare } = model;
    assert.ok(bare.features.vectors, 'the shipped model reads word vectors');
    assert.throws(() => classify(bare, 'The app crashes on start.'), /word vectors/);
  });
});

describe('word vectors', () => {
  const vectors = loadWordVectors();

  test('when the shipped table is decoded, then it has the words the model was trained with', () => {
    assert.equal(vectors.index.size, model.features.vectors?.words);
    assert.equal(vectors.dims, 100);
  });

  test('when words are related, then their mean vectors are closer than unrelated ones', () => {
    const cos = (a: Float64Array, b: Float64Array) => a.reduce((s, x, i) => s + x * b[i]!, 0);
    const crash = meanVector(vectors, ['crash'])!;
    const failure = meanVector(vectors, ['failure'])!;
    const recipe = meanVector(vectors, ['recipe'])!;
    assert.ok(cos(crash, failure) > cos(crash, recipe) + 0.1);
    assert.ok(Math.abs(cos(crash, crash) - 1) < 1e-9, 'unit length');
  });

  test('when no word is known, then there is no mean vector', () => {
    assert.equal(meanVector(vectors, ['zzqxj', 'qqwwz']), undefined);
  });

  test('when the table is malformed, then decoding refuses it', () => {
    assert.throws(() => decodeWordVectors({ version: 2 }));
    assert.throws(() =>
      decodeWordVectors({ version: 1, dims: 2, words: 'a b', scales: '', vectors: '' }),
    );
  });
});

describe('priority rules', () => {
  // Ticket texts by the priority they must get, each with its category.
  const cases: Record<string, Array<[string, string]>> = {
    critical: [
      ['bug', 'The whole site is down for all our users since 9am!'],
      ['bug', 'We lost all the data in our projects after the migration.'],
      ['bug', 'Security vulnerability: other customers can see our invoices.'],
      ['bug', 'This bug affects all our customers: invoices are not generated.'],
      ['bug', 'Our production cluster went offline after the upgrade.'],
      ['bug', 'Not urgent, but we lost all the data in one project.'],
    ],
    high: [
      ['bug', 'The app crashes when I open the inbox.'],
      ['bug', 'This is blocking our production release, please help.'],
      ['bug', "I can't log in since the update."],
      ['how_to', 'How do we recover after a data loss? Asking for our backup policy.'],
      ['bug', 'The report page crashes in production for some accounts.'],
      ['feature_request', 'Please add 2FA, we just had a security incident.'],
      ['bug', 'In production the page slows down a little when the list is long.'],
    ],
    medium: [
      ['bug', 'The CSV export puts dates in the wrong format.'],
      ['feature_request', 'Please add an export to Excel.'],
      ['feature_request', 'Urgent: please add SAML login, we are blocked.'],
    ],
    low: [
      ['bug', 'Small cosmetic issue: the icon is misaligned by a few pixels.'],
      ['documentation', 'Typo on the pricing page.'],
      ['how_to', 'How do I change my avatar?'],
      ['general_question', 'Do you have a discount for students?'],
      ['bug', 'Not urgent: the export crashes when a file name has an emoji.'],
      ['bug', 'No rush, the settings page is slow to load.'],
    ],
  };
  for (const [expected, texts] of Object.entries(cases)) {
    for (const [category, text] of texts) {
      test(`when a ${category} ticket reads "${text.slice(0, 45)}…", then priority is ${expected}`, () => {
        assert.equal(priorityFor(text, category as Parameters<typeof priorityFor>[1]), expected);
      });
    }
  }

  test('when a question mentions security certifications, then it is not treated as a security incident', () => {
    assert.equal(
      priorityFor('What security certifications do you have?', 'general_question'),
      'low',
    );
  });
});

describe('summaries', () => {
  test('when a ticket starts with a greeting, then the summary is its first real sentence', () => {
    assert.equal(
      summarize(
        'Hi team,\n\nThe export button does nothing when I click it. I tried twice.\n\nThanks, Ana',
      ),
      'The export button does nothing when I click it.',
    );
  });

  test('when a ticket has a title line, then the title is the summary', () => {
    assert.equal(
      summarize('CSV export fails with a 500 error\n\nSince this morning every export fails.'),
      'CSV export fails with a 500 error.',
    );
  });

  test('when a ticket is one long sentence, then the summary is cut at a word boundary to 200 code points', () => {
    const s = summarize(`The ${'very '.repeat(80)}long problem description without any full stop`);
    assert.ok(codePointLength(s) <= 200, `length ${codePointLength(s)}`);
    assert.match(s, /…$/);
  });

  test('when a summary comes from an LLM with line breaks, then it becomes one line ending with punctuation', () => {
    assert.equal(oneSentence('  export fails\nfor big files '), 'Export fails for big files.');
  });

  test('when a ticket is code and template headings only, then the summary still says something', () => {
    assert.ok(summarize('```\nerror\n```').length > 0);
  });
});

describe('extractive answers', () => {
  const builtin = new ExtractiveModel(model);

  test('when the best entry answers the question, then its answer is used, cited and answered_fully', async () => {
    const draft = await builtin.writeAnswer('reset password', [
      hit('kb-1', 0.9, 'Open Settings and click Reset.'),
    ]);
    assert.deepEqual(draft, {
      answer: 'Open Settings and click Reset.',
      answeredFully: true,
      citedEntryIds: ['kb-1'],
      support: null,
    });
  });

  test('when the best entry is only somewhat relevant, then answered_fully is false', async () => {
    assert.equal((await builtin.writeAnswer('q', [hit('kb-1', 0.5)])).answeredFully, false);
  });

  test('when an entry answer is long, then only the sentences about the question are kept, in order', () => {
    const answer = [
      'Our billing runs monthly.',
      'Invoices are emailed on the first day of the month.',
      'You can change the card under Billing.',
      'Refunds take five days.',
      'Taxes depend on your country.',
      'To download an invoice, open Billing and click the invoice.',
      'Old invoices stay available for seven years.',
    ].join(' ');
    const trimmed = trimToQuestion(
      `${answer} ${'Filler sentence here. '.repeat(20)}`,
      termSet('How do I download an invoice?'),
    );
    assert.ok(trimmed.includes('To download an invoice, open Billing and click the invoice.'));
    assert.ok(!trimmed.includes('Refunds take five days.'));
    assert.ok(trimmed.indexOf('Invoices are emailed') < trimmed.indexOf('To download'));
  });

  test('when a draft cites an entry that was not retrieved, then it is rejected', () => {
    assert.throws(() =>
      checkGrounded({ answer: 'x', answeredFully: true, citedEntryIds: ['nope'], support: 1 }, [
        hit('a', 1),
      ]),
    );
  });
});

describe('small rules', () => {
  test('when a question has astral characters, then its length counts code points', () => {
    assert.equal(requireQuestion('😀'.repeat(2000)).length, 4000);
    assert.throws(() => requireQuestion('😀'.repeat(2001)), { code: 'invalid_request' });
  });

  test('when it is the last second of a UTC month, then Retry-After is 1 second and the month is that month', () => {
    const at = new Date('2026-12-31T23:59:59.000Z');
    assert.equal(monthOf(at), '2026-12');
    assert.equal(secondsUntilNextMonth(at), 1);
    assert.equal(secondsUntilNextMonth(new Date('2026-02-01T00:00:00.000Z')), 28 * 86_400);
  });

  test('when an LLM error is 429, 5xx or a timeout, then it is retried; 400 and 401 are not', () => {
    const headers = new Headers({ 'retry-after': '2' });
    assert.ok((retryDelay(APIError.generate(429, {}, 'x', headers), 0) ?? 0) >= 2_000);
    assert.notEqual(retryDelay(APIError.generate(503, {}, 'x', new Headers()), 1), undefined);
    assert.notEqual(retryDelay(new APIConnectionTimeoutError(), 0), undefined);
    assert.equal(retryDelay(APIError.generate(400, {}, 'x', new Headers()), 0), undefined);
    assert.equal(retryDelay(APIError.generate(401, {}, 'x', new Headers()), 0), undefined);
    assert.equal(retryDelay(new Error('malformed'), 0), undefined);
  });

  test('when calls keep failing, then the breaker opens, fails fast, and one trial after the pause closes it', async () => {
    let now = 0;
    const breaker = new CircuitBreaker(2, 1_000, () => now);
    const fail = () => breaker.run(async () => Promise.reject(new Error('down')));
    await assert.rejects(fail(), /down/);
    await assert.rejects(fail(), /down/);
    assert.equal(breaker.state, 'open');
    await assert.rejects(
      breaker.run(async () => 'never'),
      CircuitOpenError,
    );
    now = 1_001;
    assert.equal(breaker.state, 'half_open');
    assert.equal(await breaker.run(async () => 'ok'), 'ok');
    assert.equal(breaker.state, 'closed');
  });
});
