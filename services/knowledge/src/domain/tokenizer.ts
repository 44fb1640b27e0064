import { porterStem } from './porter-stemmer.js';

/**
 * English function words: they carry no topic, so they are dropped before
 * scoring and hashing ("how do I delete my account" → delet, account).
 * Apostrophes are removed before lookup, so "don't" is listed as "dont".
 */
const STOPWORD_LIST =
  'a about above after again against all am an and any are arent as at be because been before being below ' +
  'between both but by can cannot cant could couldnt did didnt do does doesnt doing dont down during each ' +
  'few for from further had hadnt has hasnt have havent having he hed hell hes her here heres hers herself ' +
  'him himself his how hows i id ill im ive if in into is isnt it its itself lets me more most mustnt my ' +
  'myself no nor not of off on once only or other ought our ours ourselves out over own same shant she ' +
  'shed shell shes should shouldnt so some such than that thats the their theirs them themselves then ' +
  'there theres these they theyd theyll theyre theyve this those through to too under until up very was ' +
  'wasnt we wed well were weve werent what whats when whens where wheres which while who whos whom why ' +
  'whys with wont would wouldnt you youd youll youre youve your yours yourself yourselves';

export const STOPWORDS: ReadonlySet<string> = new Set(STOPWORD_LIST.split(' '));

/** Longer "words" are identifiers, hashes or base64 noise rather than vocabulary. */
const MAX_WORD_LENGTH = 40;

const WORD = /[\p{L}\p{N}]+/gu;
const APOSTROPHES = /['’‘`]/g;

/**
 * The last text split and its words: a search splits its query twice in a row (its terms for
 * the index, its words for the query embedding), and so does writing an entry.
 */
let lastText: string | undefined;
let lastWords: readonly string[] = [];

/** Lower-cased words (letters and digits) in order, apostrophes folded ("don't" → "dont"). */
export function words(text: string): readonly string[] {
  if (text === lastText) return lastWords;
  const folded = text.normalize('NFKC').toLowerCase().replace(APOSTROPHES, '');
  const out: string[] = [];
  for (const match of folded.matchAll(WORD)) {
    const w = match[0];
    if (w.length <= MAX_WORD_LENGTH) out.push(w);
  }
  lastText = text;
  lastWords = Object.freeze(out);
  return lastWords;
}

export function isStopword(word: string): boolean {
  return STOPWORDS.has(word);
}

/**
 * Stems seen recently. A KB's vocabulary is small next to its text, so every entry written
 * and every query reuses the stems of words seen before instead of running Porter's steps
 * again (the most expensive part of tokenising). Bounded: emptied when full.
 */
const STEM_CACHE_SIZE = 50_000;
const stems = new Map<string, string>();

/** porterStem, memoised. */
export function stem(word: string): string {
  let s = stems.get(word);
  if (s === undefined) {
    if (stems.size >= STEM_CACHE_SIZE) stems.clear();
    s = porterStem(word);
    stems.set(word, s);
  }
  return s;
}

/** The index terms of a text: content words, stemmed, in order (duplicates kept). */
export function terms(text: string): string[] {
  const out: string[] = [];
  for (const w of words(text)) {
    if (!STOPWORDS.has(w)) out.push(stem(w));
  }
  return out;
}

/** Term → occurrences. */
export function termCounts(list: readonly string[]): Map<string, number> {
  const counts = new Map<string, number>();
  for (const t of list) counts.set(t, (counts.get(t) ?? 0) + 1);
  return counts;
}
