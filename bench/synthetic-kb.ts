// Synthetic KB text for benchmarks: Zipf-distributed pseudo-words from a fixed
// seed, so every run sees the same data. Never taken from evaluation data.
import { mulberry32 } from '@support-agent/shared';

export const random = mulberry32(42);
const SYLLABLES = [
  'ka',
  'lo',
  'mi',
  'ne',
  'ru',
  'sta',
  'ver',
  'po',
  'lin',
  'dex',
  'tor',
  'qua',
  'zen',
  'fi',
  'gro',
  'bel',
  'sun',
  'tra',
];
const FUNCTION_WORDS = [
  'the',
  'a',
  'to',
  'of',
  'in',
  'is',
  'how',
  'do',
  'i',
  'my',
  'can',
  'with',
  'for',
  'and',
  'it',
  'on',
];
const VOCABULARY = Array.from({ length: 20_000 }, () => {
  const n = 2 + Math.floor(random() * 3);
  return Array.from({ length: n }, () => SYLLABLES[Math.floor(random() * SYLLABLES.length)]).join(
    '',
  );
});
// Zipf(1.1) over the vocabulary: a few very common words, a long tail of rare ones.
const CUMULATIVE = (() => {
  const weights = VOCABULARY.map((_, i) => 1 / Math.pow(i + 1, 1.1));
  const total = weights.reduce((a, b) => a + b, 0);
  let acc = 0;
  return weights.map((w) => (acc += w / total));
})();

function word(): string {
  if (random() < 0.3) return FUNCTION_WORDS[Math.floor(random() * FUNCTION_WORDS.length)]!;
  const r = random();
  let lo = 0;
  let hi = CUMULATIVE.length - 1;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (CUMULATIVE[mid]! < r) lo = mid + 1;
    else hi = mid;
  }
  return VOCABULARY[lo]!;
}

const sentence = (min: number, max: number) =>
  Array.from({ length: min + Math.floor(random() * (max - min + 1)) }, word).join(' ');

export function entry(i: number): { id: string; question: string; answer: string; tags: string[] } {
  return { id: `e${i}`, question: `${sentence(6, 12)}?`, answer: `${sentence(30, 80)}.`, tags: [] };
}

/** A query paraphrasing a random entry's question: some of its words, some noise. */
export function queryFor(question: string): string {
  const words = question.replace('?', '').split(' ');
  const kept = words.filter(() => random() < 0.6);
  return [...kept, word(), word()].join(' ');
}
