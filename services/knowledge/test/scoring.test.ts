// Unit tests of the domain's text analysis, scoring, hashing and validation, the
// built-in embeddings.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { AppError } from '@support-agent/shared';
import { HashedEmbeddings } from '../src/data-access/hashed-embeddings.js';
import { collectionName, isCollectionOf } from '../src/domain/fingerprint.js';
import { pointIdOf, uuidV5 } from '../src/domain/hashing.js';
import { porterStem } from '../src/domain/porter-stemmer.js';
import {
  calibrate,
  dot,
  documentTerms,
  idf,
  lexicalSimilarity,
  maxBm25,
  bm25Score,
  MAX_QUERY_TERMS,
  queryTerms,
  rankCandidates,
  sparseValue,
  termIdfs,
} from '../src/domain/scoring.js';
import { candidateSetOf } from '../src/domain/candidate-set.js';
import { terms, words } from '../src/domain/tokenizer.js';
import {
  validateEntry,
  validateLimit,
  validateOrgId,
  validateQuery,
} from '../src/domain/validation.js';

describe('tokenizer and stemmer', () => {
  it('when text is tokenised, then it is NFKC-folded, lower-cased, split on non-alphanumerics, apostrophes removed', () => {
    assert.deepEqual(words("Don't RESET the Ｐａｓｓｗｏｒｄ, café-2fa!"), [
      'dont',
      'reset',
      'the',
      'password',
      'café',
      '2fa',
    ]);
  });

  it('when terms are extracted, then stop words go and words are stemmed', () => {
    assert.deepEqual(terms('How do I delete my accounts?'), ['delet', 'account']);
    assert.deepEqual(terms('Deleting, deleted, deletion'), ['delet', 'delet', 'delet']);
  });

  it('when the Porter stemmer runs, then it matches the reference outputs', () => {
    const cases: Record<string, string> = {
      caresses: 'caress',
      ponies: 'poni',
      cats: 'cat',
      agreed: 'agre',
      plastered: 'plaster',
      motoring: 'motor',
      sing: 'sing',
      hopping: 'hop',
      falling: 'fall',
      filing: 'file',
      happy: 'happi',
      relational: 'relat',
      conditional: 'condit',
      digitizer: 'digit',
      hopefulness: 'hope',
      electrical: 'electr',
      adjustment: 'adjust',
      adoption: 'adopt',
      generalizations: 'gener',
      controll: 'control',
      roll: 'roll',
      sky: 'sky',
    };
    for (const [word, stem] of Object.entries(cases)) assert.equal(porterStem(word), stem, word);
    assert.equal(porterStem('2fa'), '2fa', 'non-letters are left alone');
  });
});

describe('scoring', () => {
  const entry = {
    question: 'How do I reset my password?',
    answer: 'Open Settings and choose Reset password.',
    tags: [],
  };

  it('when IDF is computed, then rarer terms weigh more and it stays positive', () => {
    assert.ok(idf(100, 1) > idf(100, 50));
    assert.ok(idf(100, 100) > 0);
    assert.ok(idf(10, 0) > idf(10, 1));
  });

  it('when an entry is turned into a sparse vector, then indices ascend and question terms weigh more', () => {
    const { sparse, terms: distinct } = documentTerms(entry);
    const idx = Array.from(sparse.indices);
    assert.deepEqual(
      idx,
      [...idx].sort((a, b) => a - b),
    );
    assert.equal(new Set(idx).size, idx.length);
    assert.ok(
      distinct.includes('password') && distinct.includes('reset') && distinct.includes('set'),
    );
    const [pw] = queryTerms('password');
    const [settings] = queryTerms('settings');
    assert.ok(
      sparseValue(sparse, pw!.id) > sparseValue(sparse, settings!.id),
      'question term outweighs answer-only term',
    );
    assert.equal(sparseValue(sparse, 12345), 0);
  });

  it('when a query repeats or exceeds the term budget, then terms are counted and capped', () => {
    assert.deepEqual(
      queryTerms('reset reset password').map((t) => [t.term, t.count]),
      [
        ['reset', 2],
        ['password', 1],
      ],
    );
    const long = Array.from({ length: 100 }, (_, i) => `word${i}`).join(' ');
    assert.equal(queryTerms(long).length, MAX_QUERY_TERMS);
  });

  it('when lexical similarity is computed, then it is 0 without overlap, grows with coverage and stays below 1', () => {
    const { sparse } = documentTerms(entry);
    const stats = { docCount: 10, documentFrequency: new Map<number, number>() };
    const sim = (q: string) => {
      const qt = queryTerms(q);
      const weights = qt.map((t) => sparseValue(sparse, t.id));
      const df = new Map(qt.map((t) => [t.id, 1]));
      const idfs = termIdfs(qt, { ...stats, documentFrequency: df });
      assert.deepEqual(
        Array.from(idfs),
        qt.map(() => idf(stats.docCount, 1)),
      );
      return lexicalSimilarity(
        bm25Score(qt, idfs, (t) => weights[t]!),
        maxBm25(qt, idfs),
      );
    };
    assert.equal(sim('zebra migration'), 0);
    assert.ok(sim('reset password') > sim('reset password zebra'));
    assert.ok(sim('reset password') < 1);
  });

  it('when relevance is calibrated, then the curve is monotone and pinned to [0,1]', () => {
    assert.equal(calibrate(0), 0);
    assert.ok(Math.abs(calibrate(1) - 1) < 1e-12);
    assert.ok(Math.abs(calibrate(0.4) - 0.5) < 0.02);
    let last = -1;
    for (let x = 0; x <= 1; x += 0.05) {
      const y = calibrate(x);
      assert.ok(y >= last);
      last = y;
    }
    assert.equal(calibrate(-3), 0);
    assert.ok(Math.abs(calibrate(7) - 1) < 1e-12);
  });

  it('when candidates are ranked, then the best comes first, ties go by entry id and unrelated ones are dropped', async () => {
    const e = new HashedEmbeddings(64);
    const docs = [
      { id: 'b', question: 'How do I reset my password?', answer: 'Use Settings.', tags: [] },
      { id: 'a', question: 'How do I reset my password?', answer: 'Use Settings.', tags: [] },
      { id: 'c', question: 'Where are invoices?', answer: 'Under Billing.', tags: [] },
    ];
    const query = await e.embedQuery('reset password');
    const candidates = await Promise.all(
      docs.map(async (d) => ({
        entry: { ...d, updatedAt: 0, contentHash: '' },
        cosine: dot(query, (await e.embedDocuments([d]))[0]!),
        sparse: documentTerms(d).sparse,
      })),
    );
    const qt = queryTerms('reset password');
    const df = new Map(qt.map((t) => [t.id, 2]));
    const ranked = rankCandidates(
      { terms: qt, dense: query },
      candidateSetOf(qt, { docCount: 3, documentFrequency: df }, candidates, true),
      e.cosineRange,
      5,
    );
    assert.deepEqual(
      ranked.slice(0, 2).map((r) => r.candidate.entry.id),
      ['a', 'b'],
    );
    assert.equal(ranked[0]!.score, ranked[1]!.score);
    assert.ok(
      ranked.slice(2).every((r) => r.score < 0.1),
      'the unrelated entry scores low or is dropped',
    );
    const zebra = queryTerms('zebra');
    const none = rankCandidates(
      { terms: zebra, dense: null },
      candidateSetOf(zebra, { docCount: 3, documentFrequency: new Map() }, candidates, false),
      e.cosineRange,
      5,
    );
    assert.deepEqual(none, [], 'no overlap and no dense evidence: nothing returned');
  });
});

describe('hashed embeddings', () => {
  const e = new HashedEmbeddings();

  it('when a text is embedded twice, then the vectors are identical and unit length', async () => {
    const a = await e.embedQuery('reset my password');
    const b = await e.embedQuery('reset my password');
    assert.deepEqual(a, b);
    assert.equal(a.length, 512);
    assert.ok(Math.abs(dot(a, a) - 1) < 1e-5);
  });

  it('when texts share words or word parts, then they are more similar than unrelated texts', async () => {
    const q = await e.embedQuery('how to delete my account');
    const near = await e.embedQuery('deleting accounts');
    const far = await e.embedQuery('weather forecast for tomorrow');
    assert.ok(dot(q, near) > 0.3, `near ${dot(q, near)}`);
    assert.ok(Math.abs(dot(q, far)) < 0.15, `far ${dot(q, far)}`);
    const typo = await e.embedQuery('spreadsheet formula');
    const plural = await e.embedQuery('spreadsheets formulas');
    assert.ok(dot(typo, plural) > 0.5);
  });

  it('when only stop words are embedded, then the vector is zero (no direction to compare)', async () => {
    const v = await e.embedQuery('how do I do it?');
    assert.ok(v.every((x) => x === 0));
  });

  it('when the size changes, then the fingerprint and collection name change', () => {
    const small = new HashedEmbeddings(256);
    assert.notEqual(collectionName('kb', small.fingerprint), collectionName('kb', e.fingerprint));
    assert.equal(collectionName('kb', e.fingerprint), 'kb_v1_hashed_hashed-v1_512');
    assert.equal(
      collectionName('kb', {
        provider: 'openai',
        model: 'text-embedding-3-small',
        dimensions: 1536,
      }),
      'kb_v1_openai_text-embedding-3-small_1536',
    );
    assert.ok(isCollectionOf('kb', 'kb_v1_openai_text-embedding-3-small_1536'));
    assert.ok(!isCollectionOf('kb', 'kbx_v1_openai_m_1536'));
    assert.ok(!isCollectionOf('kb', 'kb_v1_x_y'));
  });
});

describe('hashing', () => {
  it('when a UUIDv5 is computed, then it matches RFC 4122 test vectors', () => {
    assert.equal(
      uuidV5('www.example.com', '6ba7b810-9dad-11d1-80b4-00c04fd430c8'),
      '2ed6657d-e927-568b-95e1-2665a8aea6a2',
    );
  });

  it('when point ids are derived, then they depend on both organization and entry id', () => {
    assert.equal(pointIdOf('acme', 'faq-1'), pointIdOf('acme', 'faq-1'));
    assert.notEqual(pointIdOf('acme', 'faq-1'), pointIdOf('globex', 'faq-1'));
    assert.match(
      pointIdOf('acme', 'faq-1'),
      /^[0-9a-f]{8}-[0-9a-f]{4}-5[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/,
    );
  });
});

describe('validation', () => {
  const invalid = (fn: () => unknown, param: string) =>
    assert.throws(
      fn,
      (err: unknown) =>
        err instanceof AppError && err.code === 'invalid_request' && err.param === param,
    );

  it('when limit is 0 or missing, then it defaults to 5; outside 1..20 it is invalid', () => {
    assert.equal(validateLimit(0), 5);
    assert.equal(validateLimit(undefined), 5);
    assert.equal(validateLimit(20), 20);
    invalid(() => validateLimit(21), 'limit');
    invalid(() => validateLimit(-1), 'limit');
    invalid(() => validateLimit(1.5), 'limit');
  });

  it('when the query is blank or longer than 2000 code points, then it is invalid', () => {
    invalid(() => validateQuery(' \n\t'), 'query');
    invalid(() => validateQuery('a'.repeat(2001)), 'query');
    assert.equal(validateQuery('é'.repeat(2000)), 'é'.repeat(2000));
  });

  it('when an org id could be ambiguous in a point id, then it is invalid', () => {
    invalid(() => validateOrgId('a:b'), 'org_id');
    invalid(() => validateOrgId(''), 'org_id');
    assert.equal(validateOrgId('org_123'), 'org_123');
  });

  it('when an entry is validated, then text stays verbatim and tags are trimmed and de-duplicated', () => {
    const e = validateEntry({
      id: 'x',
      question: '  Q?  ',
      answer: 'A',
      tags: [' a ', 'a', '', 'b'],
    });
    assert.deepEqual(e, { id: 'x', question: '  Q?  ', answer: 'A', tags: ['a', 'b'] });
    invalid(() => validateEntry({ id: 'x', question: 'Q', answer: ' ' }), 'answer');
    invalid(() => validateEntry({ id: 'bad\nid', question: 'Q', answer: 'A' }), 'id');
  });
});
