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
