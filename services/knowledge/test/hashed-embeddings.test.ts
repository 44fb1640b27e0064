// The built-in embeddings count their features in reusable tables, hashing each feature from
// the characters it lies in: these tests hold them to the straightforward version (a Map per
// family keyed by the feature's text, as the embeddings were first written), component by
// component to the bit, on many kinds of text, including features whose hashes collide.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { fnv1aFrom, fnv1aUnit, mulberry32 } from '@support-agent/shared';
import { entry, queryFor } from '../../../bench/synthetic-kb.js';
import { FeatureCounts } from '../src/data-access/feature-counts.js';
import { FAMILY, HashedEmbeddings, normalize } from '../src/data-access/hashed-embeddings.js';
import { finish32, hash32 } from '../src/domain/hashing.js';
import { questionText } from '../src/domain/scoring.js';
import { isStopword, stem, words } from '../src/domain/tokenizer.js';

/** The reference: one Map per family keyed by the feature's text, in first-insertion order. */
function referenceEmbedText(text: string, dimensions: number): Float32Array {
  const content = words(text).filter((w) => !isStopword(w));
  const stems = content.map(stem);
  const bump = (map: Map<string, number>, key: string) => map.set(key, (map.get(key) ?? 0) + 1);
  const unigrams = new Map<string, number>();
  for (const s of stems) bump(unigrams, s);
  const bigrams = new Map<string, number>();
  for (let i = 0; i + 1 < stems.length; i++) bump(bigrams, `${stems[i]} ${stems[i + 1]}`);
  const chargrams = new Map<string, number>();
  for (const w of content) {
    const padded = `<${w}>`;
    for (const n of [3, 4, 5]) {
      for (let i = 0; i + n <= padded.length; i++) bump(chargrams, padded.slice(i, i + n));
    }
  }
  const v = new Float32Array(dimensions);
  const families: Array<[Map<string, number>, { seed: number; weight: number }]> = [
    [unigrams, FAMILY.unigram],
    [bigrams, FAMILY.bigram],
    [chargrams, FAMILY.chargram],
  ];
  for (const [features, { seed, weight }] of families) {
    if (features.size === 0) continue;
    const part = new Float32Array(dimensions);
    for (const [feature, tf] of features) {
      const h = hash32(feature, seed);
      part[h % dimensions]! += (h & 0x80000000 ? -1 : 1) * (1 + Math.log(tf));
    }
    let norm = 0;
    for (let i = 0; i < part.length; i++) norm += part[i]! * part[i]!;
    if (norm === 0) continue;
    const scale = weight / Math.sqrt(norm);
    for (let i = 0; i < part.length; i++) v[i]! += part[i]! * scale;
  }
  return normalize(v);
}

function referenceEmbedEntry(
  e: { question: string; answer: string; tags: string[] },
  dimensions: number,
): Float32Array {
  const q = referenceEmbedText(questionText(e), dimensions);
  const a = referenceEmbedText(e.answer, dimensions);
  const v = new Float32Array(dimensions);
  for (let i = 0; i < v.length; i++) v[i] = 0.6 * q[i]! + 0.4 * a[i]!;
  return normalize(v);
}

/** The first component that differs (Object.is: -0 and 0 differ), or -1. */
function firstDifference(a: Float32Array, b: Float32Array): number {
  if (a.length !== b.length) return 0;
  for (let i = 0; i < a.length; i++) if (!Object.is(a[i], b[i])) return i;
  return -1;
}

function assertSameVector(actual: Float32Array, expected: Float32Array, text: string): void {
  const i = firstDifference(actual, expected);
  assert.equal(
    i,
    -1,
    `component ${i}: ${actual[i]} ≠ ${expected[i]} for ${JSON.stringify(text.slice(0, 80))}`,
  );
}

const random = mulberry32(2111);
const pick = <T>(xs: readonly T[]): T => xs[Math.floor(random() * xs.length)]!;

/** Made-up support prose (not evaluation data): questions and answers as a help desk writes them. */
const PROSE = [
  'How do I reset my password if I no longer have access to my email?',
  'Go to Settings → Security, choose "Reset password" and follow the link we send you. ' +
    'If the link has expired, request a new one; links last 30 minutes.',
  "Why can't I export my invoices to CSV? The export button is greyed out.",
  'Exports need the Billing Admin role. Ask an owner to grant it under Team → Roles, then reload.',
  'Is two-factor authentication (2FA) required for every account on the Enterprise plan?',
  "Spreadsheet formulas don't recalculate after importing a spreadsheet with formulas.",
  'Delete the account, deleting accounts, deleted account, account deletion: what happens to data?',
  'Our API returns HTTP 429 Too Many Requests; rate limits are 600 requests per minute per key.',
  'Webhooks retry with exponential backoff (1s, 2s, 4s … 1h) and give up after 24 hours.',
];

const UNICODE = [
  'Café, naïve, coöperate — Ｆｕｌｌｗｉｄｔｈ ＡＢＣ and ligatures ﬁle ﬂow',
  'Ошибка входа: пароль не подходит, сбросить пароль',
  '登录失败 密码 重置 账户 删除 账户',
  'emoji 😀😀 pile 💩 of 𝒳𝒴𝒵 surrogate 𝒳𝒴 pairs 😀',
  'e\u0301 combining e\u0301e\u0301 marks ﷺ ß straße STRASSE',
  'العربية النص الاتجاه עברית טקסט',
];

function syntheticTexts(): string[] {
  const out: string[] = [];
  for (let i = 0; i < 60; i++) {
    const e = entry(i);
    out.push(e.question, e.answer, queryFor(e.question));
  }
  return out;
}

/** Words from a tiny alphabet: many repeated words, stems, bigrams and n-grams. */
function repetitiveText(count: number): string {
  const letters = 'aabbe';
  const out: string[] = [];
  for (let i = 0; i < count; i++) {
    const n = 1 + Math.floor(random() * 7);
    let w = '';
    for (let j = 0; j < n; j++) w += pick([...letters]);
    out.push(random() < 0.2 ? pick(['the', 'and', 'of', 'I']) : w);
  }
  return out.join(' ');
}

function longText(wordCount: number): string {
  const out: string[] = [];
  for (let i = 0; out.length < wordCount; i++) out.push(...entry(1000 + i).answer.split(' '));
  return out.slice(0, wordCount).join(' ');
}

/**
 * Two different lower-case words whose hash32 values under `seed` are equal after `feature`
 * turns them into the family's feature text (birthday search over seeded random words).
 */
function collidingWords(
  seed: number,
  feature: (w: string) => string,
  length: number,
): [string, string] {
  const rng = mulberry32(seed ^ length);
  const seen = new Map<number, string>();
  for (;;) {
    let w = '';
    for (let j = 0; j < length; j++) w += String.fromCharCode(97 + Math.floor(rng() * 26));
    if (isStopword(w)) continue;
    const f = feature(w);
    const h = hash32(f, seed);
    const other = seen.get(h);
    if (other !== undefined && feature(other) !== f) return [other, w];
    seen.set(h, w);
  }
}

describe('hashed embeddings counted in reusable tables', () => {
  const texts = [
    ...PROSE,
    ...UNICODE,
    ...syntheticTexts(),
    repetitiveText(50),
    repetitiveText(400),
    'account account account accounts accounting',
    'the and of I to how do',
    '',
    '   ?!  ',
    'a',
    'ab',
    'xyz',
    `${'x'.repeat(40)} ${'y'.repeat(41)} ${'z'.repeat(39)}`,
  ];

  it('when texts of every kind are embedded, then every component equals the Map-based version', () => {
    for (const dimensions of [512, 64, 100]) {
      const e = new HashedEmbeddings(dimensions);
      for (const text of texts)
        assertSameVector(e.embedText(text), referenceEmbedText(text, dimensions), text);
    }
  });

  it('when a long text comes between short ones, then the tables grow and later texts are still exact', () => {
    const e = new HashedEmbeddings();
    const sequence = [
      PROSE[0]!,
      longText(20_000),
      PROSE[1]!,
      repetitiveText(5_000),
      UNICODE[3]!,
      '',
    ];
    for (const text of sequence)
      assertSameVector(e.embedText(text), referenceEmbedText(text, 512), text);
  });

  it('when entries are embedded, then they equal the Map-based question and answer mix', () => {
    const e = new HashedEmbeddings();
    for (let i = 0; i < 50; i++) {
      const item =
        i % 2 === 0
          ? entry(i)
          : { question: pick(PROSE), answer: pick(UNICODE), tags: ['a b', 'c'] };
      assertSameVector(e.embedEntry(item), referenceEmbedEntry(item, 512), item.question);
    }
  });

  it('when two different features of a family have the same hash, then they are still counted apart', () => {
    const e = new HashedEmbeddings();
    // Unigrams: two stems with one hash.
    const [u1, u2] = collidingWords(FAMILY.unigram.seed, stem, 6);
    // Bigrams: "x a" and "x b" with one hash (x fixed, a and b different stems).
    const [b1, b2] = collidingWords(FAMILY.bigram.seed, (w) => `${stem('zebra')} ${stem(w)}`, 6);
    // Character 5-grams: two five-letter words w whose "w" (from "<w>") share a hash.
    const [c1, c2] = collidingWords(FAMILY.chargram.seed, (w) => w, 5);
    for (const text of [
      `${u1} ${u2} ${u1}`,
      `zebra ${b1} zebra ${b2} zebra ${b1}`,
      `${c1} ${c2} ${c1}`,
      `${u1} ${u2} zebra ${b2} ${c2} ${c1} zebra ${b1}`,
    ]) {
      assertSameVector(e.embedText(text), referenceEmbedText(text, 512), text);
    }
  });
});

describe('feature counts', () => {
  it('when features with one hash are different, then each has its count, in first-seen order', () => {
    const keys = ['x', 'y', 'x', 'z', 'y', 'x'];
    const table = new FeatureCounts((a, _, b) => keys[a] === keys[b]);
    table.clear(keys.length);
    for (let i = 0; i < keys.length; i++) table.add(7, i, 0); // every feature hashes to 7
    assert.equal(table.size, 3);
    assert.deepEqual([...table.counts.subarray(0, 3)], [3, 2, 1]);
    table.clear(2);
    table.add(-5, 0, 0);
    assert.equal(table.size, 1, 'clear empties the table');
    assert.equal(table.counts[0], 1);
  });

  it('when a long text is followed by a short one, then the arrays grown for it are cut back', () => {
    const table = new FeatureCounts((a, _, b) => a === b);
    table.clear(100_000);
    for (let i = 0; i < 100_000; i++) table.add(Math.imul(i, 0x9e3779b1), i, 0);
    assert.equal(table.size, 100_000);
    assert.ok(table.hashes.length >= 100_000);
    table.clear(3);
    assert.equal(table.hashes.length, 32_768, 'back to the retained size');
    for (const k of [5, 6, 5]) table.add(k, k, 0);
    assert.deepEqual([...table.counts.subarray(0, table.size)], [2, 1]);
  });
});

describe('hash32 piece by piece', () => {
  it('when a text is hashed in pieces, then the hash is that of the whole text', () => {
    for (const seed of [0x811c9dc5, FAMILY.unigram.seed, FAMILY.chargram.seed, 0]) {
      for (const text of ['', 'a', 'reset password', '𝒳é登录', '<word>']) {
        const whole = hash32(text, seed);
        assert.equal(finish32(fnv1aFrom(seed, text)) >>> 0, whole, text);
        for (let cut = 0; cut <= text.length; cut++) {
          const left = fnv1aFrom(seed, text, 0, cut);
          assert.equal(finish32(fnv1aFrom(left, text, cut)) >>> 0, whole, `${text} at ${cut}`);
          if (cut < text.length) {
            const unit = fnv1aUnit(left, text.charCodeAt(cut));
            assert.equal(finish32(fnv1aFrom(unit, text, cut + 1)) >>> 0, whole);
          }
        }
      }
    }
  });
});
