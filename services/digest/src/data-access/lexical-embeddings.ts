import { fnv1a } from '@support-agent/shared';
import type { Embedder, Embeddings } from '../domain/ports.js';

/**
 * The built-in embeddings used when the knowledge service cannot embed: the
 * hashing trick over content-word unigrams and bigrams (stop words dropped,
 * light suffix stemming, sublinear term frequency, signed hashes), L2-normalised.
 * Deterministic and dependency-free; good enough to group paraphrases that
 * share their key words ("reset my password" ~ "password reset link").
 */
export const LEXICAL_MODEL = 'digest-lexical-v1';
export const LEXICAL_DIMENSIONS = 1024;
export const LEXICAL_FINGERPRINT = `builtin/${LEXICAL_MODEL}/${LEXICAL_DIMENSIONS}`;

const BIGRAM_WEIGHT = 0.5;
const SEED_UNIGRAM = 0x811c9dc5;
const SEED_BIGRAM = 0x01000193;

// Function words plus the filler of support questions ("hi, how can I … please, thanks").
const STOPWORDS = new Set(
  (
    'a about above after again against all also am an and any anyone are as at be because been before being ' +
    'below between both but by can cannot cant could couldnt did didnt do does doesnt doing dont down during each ' +
    'few for from further get gets getting got had has have having he her here hers him his how i id if im in into ' +
    'is isnt it its ive just keep keeps know let lets like me more most my myself need needs no nor not now of off ' +
    'on once only or other our out over own please same seem seems she should so some someone still such than ' +
    'thank thanks that the their them then there these they this those through to too trying try tried under until ' +
    'up us very want wanted wants was way we were what whats when where which while who why will with without wont ' +
    'would you your hi hello hey help possible anybody tell show guys team ok okay there something anything'
  ).split(' '),
);

// Actions shared by many unrelated topics ("reset my password" / "reset my API key"): the
// object of a question says more about its topic than the verb, so these count half.
const GENERIC_WEIGHT = 0.5;
const GENERIC_STEMS = new Set(
  (
    'reset chang updat delet remov add creat set us find mak work fix open clos enabl disabl turn setup ' +
    'configur se view access edit manag cancel stop start issu problem error receiv send sent ' +
    'arriv download upload'
  ).split(' '),
);

const WORD = /[\p{L}\p{N}]+/gu;
const APOSTROPHES = /['’‘`]/g;

export class LexicalEmbeddings implements Embedder {
  constructor(readonly dimensions: number = LEXICAL_DIMENSIONS) {}

  async embed(texts: string[]): Promise<Embeddings> {
    return { vectors: texts.map((t) => this.embedText(t)), fingerprint: LEXICAL_FINGERPRINT };
  }

  embedText(text: string): Float32Array {
    const stems = contentStems(text);
    const v = new Float32Array(this.dimensions);
    const counts = new Map<string, number>();
    for (const s of stems) counts.set(`u:${s}`, (counts.get(`u:${s}`) ?? 0) + 1);
    for (let i = 0; i + 1 < stems.length; i++) {
      const key = `b:${stems[i]} ${stems[i + 1]}`;
      counts.set(key, (counts.get(key) ?? 0) + 1);
    }
    for (const [feature, tf] of counts) {
      const bigram = feature.startsWith('b:');
      const h = fnv1a(feature, bigram ? SEED_BIGRAM : SEED_UNIGRAM);
      const sign = h & 0x80000000 ? -1 : 1;
      const weight = bigram
        ? BIGRAM_WEIGHT
        : GENERIC_STEMS.has(feature.slice(2))
          ? GENERIC_WEIGHT
          : 1;
      v[h % this.dimensions]! += sign * weight * (1 + Math.log(tf));
    }
    let norm = 0;
    for (let i = 0; i < v.length; i++) norm += v[i]! * v[i]!;
    if (norm > 0) {
      const inv = 1 / Math.sqrt(norm);
      for (let i = 0; i < v.length; i++) v[i]! *= inv;
    }
    return v;
  }
}

/** Lower-cased content words of a text, stop words removed, lightly stemmed, in order. */
export function contentStems(text: string): string[] {
  const folded = text.normalize('NFKC').toLowerCase().replace(APOSTROPHES, '');
  const out: string[] = [];
  for (const m of folded.matchAll(WORD)) {
    const w = m[0];
    if (w.length > 40 || STOPWORDS.has(w)) continue;
    out.push(stem(w));
  }
  return out;
}

/** A deliberately small suffix stripper: plurals, -ing, -ed, a final -e, doubled final consonants. */
export function stem(word: string): string {
  if (/\d/.test(word) || word.length <= 3) return word;
  let w = word;
  if (w.endsWith('ies') && w.length > 4) w = `${w.slice(0, -3)}y`;
  else if (w.endsWith('sses')) w = w.slice(0, -2);
  else if (w.endsWith('s') && !w.endsWith('ss') && !w.endsWith('us') && !w.endsWith('is'))
    w = w.slice(0, -1);
  if (w.endsWith('ing') && w.length > 5) w = w.slice(0, -3);
  else if (w.endsWith('ed') && w.length > 4) w = w.slice(0, -2);
  if (w.endsWith('e') && w.length > 3) w = w.slice(0, -1);
  if (w.length > 3 && /([b-df-hj-np-tv-z])\1$/.test(w) && !/(ll|ss|zz)$/.test(w))
    w = w.slice(0, -1);
  return w;
}
