// Text rules of the API contract that every service checks the same way (DESIGN.md §3).

/** Length in Unicode code points, the unit of every length limit of the API (an emoji counts 1). */
export function codePointLength(text: string): number {
  let n = 0;
  for (const _ of text) n++;
  return n;
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
export function loneSurrogatePath(value: unknown, path = ''): string | undefined {
  if (typeof value === 'string') return hasLoneSurrogate(value) ? path : undefined;
  if (typeof value !== 'object' || value === null) return undefined;
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const found = loneSurrogatePath(value[i], `${path}[${i}]`);
      if (found !== undefined) return found;
    }
    return undefined;
  }
  for (const [key, item] of Object.entries(value)) {
    const at = path === '' ? key : `${path}.${key}`;
    if (hasLoneSurrogate(key)) return at;
    const found = loneSurrogatePath(item, at);
    if (found !== undefined) return found;
  }
  return undefined;
}
