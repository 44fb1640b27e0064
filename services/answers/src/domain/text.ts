/** Text helpers shared by the extractive answerer, the summariser and the classifier. */

export { codePointLength, truncateCodePoints } from '@support-agent/shared';

const STOPWORDS = new Set(
  (
    'a an the and or but if then else of to in on at by for with from into onto about as is are was were be been being ' +
    'it its this that these those there here i me my we our you your he she they them their his her do does did doing ' +
    'have has had having can could would should will shall may might must not no so too very just also than such ' +
    'what which who whom whose when where why how all any each some more most other own same only up down out over ' +
    'under again further once s t don now am im ive id youre its lets get got please thanks thank hi hello hey'
  ).split(' '),
);

/** A light suffix stemmer: enough to match "exports"/"exporting"/"exported" with "export". */
export function stem(word: string): string {
  if (word.length <= 4) return word;
  for (const suffix of ['ations', 'ation', 'ings', 'ing', 'edly', 'ies', 'ed', 'es', 's']) {
    if (word.endsWith(suffix) && word.length - suffix.length >= 3) {
      const base = word.slice(0, -suffix.length);
      return suffix === 'ies' ? `${base}y` : base;
    }
  }
  return word;
}

/** Lower-cased words (letters and digits, any script). */
export function words(text: string): string[] {
  return (
    text
      .toLowerCase()
      .normalize('NFKC')
      .match(/[\p{L}\p{N}]+(?:['’][\p{L}]+)?/gu) ?? []
  );
}

/** Stemmed content words without stop words: the unit of lexical overlap. */
export function contentTerms(text: string): string[] {
  return words(text)
    .map((w) => w.replace(/['’]/g, ''))
    .filter((w) => !STOPWORDS.has(w) && (w.length > 1 || /\d/.test(w)))
    .map(stem);
}

export function termSet(text: string): Set<string> {
  return new Set(contentTerms(text));
}

/** |A ∩ B| / |A ∪ B|; 0 for two empty sets. */
export function jaccard(a: Set<string>, b: Set<string>): number {
  if (a.size === 0 && b.size === 0) return 0;
  let inter = 0;
  for (const x of a) if (b.has(x)) inter++;
  return inter / (a.size + b.size - inter);
}

/**
 * Splits prose into sentences and list items, keeping each one's original text.
 * Blank lines and list bullets end a unit; so do ., ! and ? before white space
 * and an upper-case letter, digit or quote.
 */
export function sentences(text: string): string[] {
  const out: string[] = [];
  for (const block of text.split(/\n\s*\n|\n(?=\s*(?:[-*•]|\d+[.)])\s)/)) {
    const flat = block.replace(/\s*\n\s*/g, ' ').trim();
    if (!flat) continue;
    for (const s of flat.split(/(?<=[.!?])\s+(?=["'“(\p{Lu}\p{N}])/u)) {
      const t = s.trim();
      if (t) out.push(t);
    }
  }
  return out;
}

/** Collapses runs of white space to one space. */
export function squash(text: string): string {
  return text.replace(/\s+/g, ' ').trim();
}
