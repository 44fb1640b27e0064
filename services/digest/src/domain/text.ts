/** Text helpers for digest content: user text goes into Markdown, so it is flattened and escaped. */

import { codePointLength, stripControlAndBidi } from '@support-agent/shared';

/** Control and bidi characters removed, whitespace collapsed to single spaces, trimmed: one line. */
export function oneLine(text: string): string {
  return stripControlAndBidi(text).replace(/\s+/gu, ' ').trim();
}

/**
 * Every string of a value (the digest's structured form) without control and bidi characters:
 * ticket text, KB questions and answers and an LLM's summaries all end up in it, and a NUL or
 * a right-to-left override there would reach whoever reads the digest.
 */
export function withoutControlChars<T>(value: T): T {
  if (typeof value === 'string') return stripControlAndBidi(value) as T;
  if (Array.isArray(value)) return value.map((v: unknown) => withoutControlChars(v)) as T;
  if (typeof value === 'object' && value !== null && !(value instanceof Date)) {
    return Object.fromEntries(
      Object.entries(value).map(([k, v]) => [k, withoutControlChars(v)]),
    ) as T;
  }
  return value;
}

/** At most `max` code points, cut at a word boundary when one is near, with an ellipsis. */
export function truncate(text: string, max: number): string {
  const chars = [...text];
  if (chars.length <= max) return text;
  const cut = chars.slice(0, max - 1).join('');
  const space = cut.lastIndexOf(' ');
  return `${(space > max * 0.6 ? cut.slice(0, space) : cut).trimEnd()}…`;
}

/** The first sentences of a text, up to about `max` code points. */
export function leadSentences(text: string, max: number): string {
  const flat = oneLine(text);
  if (codePointLength(flat) <= max) return flat;
  const sentences = flat.match(/[^.!?]+[.!?]+(\s|$)/gu) ?? [];
  let out = '';
  for (const s of sentences) {
    if (codePointLength(out + s) > max) break;
    out += s;
  }
  return out.trim() || truncate(flat, max);
}

/**
 * Escapes one line of text for Markdown inline content: emphasis, code, link
 * and table characters and HTML brackets everywhere, block markers (heading,
 * list) at the start, so a ticket cannot inject links, images, headings or raw
 * HTML into the digest.
 */
export function escapeMarkdown(text: string): string {
  return stripControlAndBidi(text)
    .replace(/[\\`*_[\]<>|~]/g, (c) => `\\${c}`)
    .replace(/^[#+-]/, (c) => `\\${c}`)
    .replace(/^(\d+)([.)])/, '$1\\$2');
}

/** Flattened, truncated and escaped: safe inline Markdown from arbitrary user text. */
export function inline(text: string, max: number): string {
  return escapeMarkdown(truncate(oneLine(text), max));
}

/** Key for "the same question": case, spacing and trailing punctuation ignored. */
export function questionKey(text: string): string {
  return oneLine(text)
    .toLowerCase()
    .replace(/[\s?!.]+$/u, '');
}
