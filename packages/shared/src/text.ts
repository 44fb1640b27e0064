// Text rules of the API contract that every service checks the same way (DESIGN.md §3).

/** Length in Unicode code points, the unit of every length limit of the API (an emoji counts 1). */
export function codePointLength(text: string): number {
  // A surrogate pair is two UTF-16 units and one code point; a lone surrogate counts one.
  // Counted by index, not by iterating: no allocation on a bulk import's megabytes of text.
  let pairs = 0;
  for (let i = 0; i < text.length - 1; i++) {
    const c = text.charCodeAt(i);
    if (c >= 0xd800 && c <= 0xdbff) {
      const d = text.charCodeAt(i + 1);
      if (d >= 0xdc00 && d <= 0xdfff) {
        pairs++;
        i++;
      }
    }
  }
  return text.length - pairs;
}

/** The first `max` code points of `text` (never splits a surrogate pair). */
export function truncateCodePoints(text: string, max: number): string {
  return text.length <= max ? text : Array.from(text).slice(0, max).join('');
}

/** Empty or only white space: counts as missing (DESIGN.md §3). */
export function isBlank(value: string | null | undefined): value is '' | null | undefined {
  return value === undefined || value === null || value.trim().length === 0;
}

// With the u flag a surrogate pair is one code point: only a lone surrogate matches.
const LONE_SURROGATE = /\p{Cs}/u;

/** True when the string holds a lone UTF-16 surrogate (String.prototype.isWellFormed, negated). */
export function hasLoneSurrogate(text: string): boolean {
  return LONE_SURROGATE.test(text);
}

/**
 * Where a parsed JSON value holds a string (value or property name) with a lone UTF-16
 * surrogate, such as the escape `"\ud800"`: its path (`tickets[2].text`; `''` for the value
 * itself), or undefined when every string is well formed. Such text cannot be stored or sent
 * on as UTF-8 (protobuf and MySQL would turn it into U+FFFD, so different inputs would become
 * one), hence refused.
 */
export function loneSurrogatePath(value: unknown): string | undefined {
  // Iterative, depth first in document order: a body nested thousands deep must not overflow
  // the call stack.
  const pending: Array<[unknown, string]> = [[value, '']];
  while (pending.length > 0) {
    const [item, path] = pending.pop()!;
    if (typeof item === 'string') {
      if (hasLoneSurrogate(item)) return path;
    } else if (Array.isArray(item)) {
      for (let i = item.length - 1; i >= 0; i--) pending.push([item[i], `${path}[${i}]`]);
    } else if (typeof item === 'object' && item !== null) {
      const entries = Object.entries(item);
      for (let i = entries.length - 1; i >= 0; i--) {
        const [key, child] = entries[i]!;
        const at = path === '' ? key : `${path}.${key}`;
        if (hasLoneSurrogate(key)) return at;
        pending.push([child, at]);
      }
    }
  }
  return undefined;
}

// C0 controls but tab, line feed and carriage return; DEL; C1 controls; and the bidirectional
// formatting characters (Arabic letter mark, LRM/RLM, embeddings and overrides U+202A–U+202E,
// isolates U+2066–U+2069), which can make text display in an order other than it reads.
const CONTROL_OR_BIDI =
  /[\u0000-\u0008\u000B\u000C\u000E-\u001F\u007F-\u009F\u061C\u200E\u200F\u202A-\u202E\u2066-\u2069]/gu;

/**
 * Text with control characters (NUL and the like) and bidirectional formatting characters
 * removed, for text shown to people that came from users (the FAQ digest).
 */
export function stripControlAndBidi(text: string): string {
  return text.replace(CONTROL_OR_BIDI, '');
}
