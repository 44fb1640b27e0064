import { sentences, squash, truncateCodePoints } from './text.js';

export const SUMMARY_MAX = 200;

const BOILERPLATE = [
  /^(hi|hello|hey|dear|good (morning|afternoon|evening)|greetings)\b[^.!?]*[,.!]?$/i,
  /^(thanks|thank you|thx|cheers|regards|best|kind regards|best regards|sincerely)\b/i,
  /^i hope (you|this)\b/i,
  /^(sorry|apologies) (to bother|for)\b/i,
  /^#+\s/,
  /^(describe the bug|to reproduce|steps to reproduce|expected behaviou?r|actual behaviou?r|additional context|screenshots|environment|system information|is your feature request related to a problem\??)[:.]?$/i,
];

/** Removes code, logs, quotes and markup that make no summary. */
function prose(text: string): string {
  return text
    .replace(/```[\s\S]*?(```|$)/g, '\n\n')
    .replace(/<!--[\s\S]*?-->/g, ' ')
    .replace(/^\s*>.*$/gm, '')
    .replace(/^\s*at .*$/gm, '')
    .replace(/^\s*#{1,6}\s+.*$/gm, '\n')
    .replace(/^\s*[-*]\s+\[[ x]\]\s+.*$/gim, '')
    .replace(/(^|\s)[*_`]{1,3}([^*_`\n]+)[*_`]{1,3}(?=[\s.,;:!?]|$)/gm, '$1$2')
    .replace(/\[([^\]]+)\]\([^)]+\)/g, '$1');
}

/** Drops a leading "Hi team," from a sentence. */
function stripGreeting(s: string): string {
  return s.replace(/^(hi|hello|hey|dear)\b[^,.!?]{0,30}[,!.]\s*/i, '').trim();
}

/**
 * One-sentence extractive summary: the first substantive sentence of the text
 * (a short first line counts, as the title of an issue or email), without
 * greetings, template headings and code; at most SUMMARY_MAX code points.
 */
export function summarize(content: string): string {
  const candidates = sentences(prose(content.slice(0, 8_000)))
    .map(stripGreeting)
    .filter((s) => s.split(/\s+/).length >= 3 && !BOILERPLATE.some((re) => re.test(s)));
  const chosen = candidates[0] ?? squash(content).slice(0, 400);
  return oneSentence(chosen);
}

/** Normalises any summary (also one from an LLM) to one line of at most SUMMARY_MAX code points. */
export function oneSentence(text: string): string {
  let s = squash(text);
  if (!s) return 'No description given.';
  s = s.charAt(0).toUpperCase() + s.slice(1);
  if ([...s].length > SUMMARY_MAX) {
    const cut = truncateCodePoints(s, SUMMARY_MAX - 1);
    const atWord = cut.replace(/\s+\S*$/, '');
    s = `${(atWord.length > SUMMARY_MAX / 2 ? atWord : cut).replace(/[\s,;:.-]+$/, '')}…`;
  } else if (!/[.!?…]$/.test(s)) {
    s = `${s}.`;
  }
  return s;
}
