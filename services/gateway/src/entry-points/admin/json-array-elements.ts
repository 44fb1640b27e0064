import { TimeSlicer } from '@support-agent/shared';

/** The text is not one JSON array (the caller decides between "not JSON" and "not an array"). */
export class NotJsonArray extends Error {}

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_ARRAY = 0x5b;
const CLOSE_ARRAY = 0x5d;
const OPEN_OBJECT = 0x7b;
const CLOSE_OBJECT = 0x7d;
const COMMA = 0x2c;

const isJsonSpace = (c: number) => c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09;

/**
 * Parses a JSON array element by element, in time slices: a 10 MiB array never holds the event
 * loop in one `JSON.parse`. The text is cut at the array's own commas (outside strings and
 * nested values) and each element is parsed with `JSON.parse`, so the result is the array
 * `JSON.parse(text)` would give, and any text it would refuse throws NotJsonArray.
 */
export async function parseJsonArrayInSlices(
  text: string,
  slicer: TimeSlicer = new TimeSlicer(),
): Promise<unknown[]> {
  let i = skipSpace(text, 0);
  if (text.charCodeAt(i) !== OPEN_ARRAY) throw new NotJsonArray();
  i = skipSpace(text, i + 1);
  const out: unknown[] = [];
  if (text.charCodeAt(i) === CLOSE_ARRAY) return end(text, i + 1, out);
  for (;;) {
    await slicer.next();
    const start = i;
    i = valueEnd(text, i);
    out.push(parseOne(text.slice(start, i)));
    i = skipSpace(text, i);
    const c = text.charCodeAt(i);
    if (c === CLOSE_ARRAY) return end(text, i + 1, out);
    if (c !== COMMA) throw new NotJsonArray();
    i = skipSpace(text, i + 1);
  }
}

function end(text: string, i: number, out: unknown[]): unknown[] {
  if (skipSpace(text, i) !== text.length) throw new NotJsonArray();
  return out;
}

function parseOne(element: string): unknown {
  try {
    return JSON.parse(element) as unknown;
  } catch {
    throw new NotJsonArray();
  }
}

function skipSpace(text: string, i: number): number {
  while (i < text.length && isJsonSpace(text.charCodeAt(i))) i++;
  return i;
}

/** Index just past the element starting at `i`: a string, a nested value or a literal. */
function valueEnd(text: string, i: number): number {
  let depth = 0;
  for (; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === QUOTE) {
      i = stringEnd(text, i) - 1;
      if (depth === 0) return i + 1;
    } else if (c === OPEN_ARRAY || c === OPEN_OBJECT) {
      depth++;
    } else if (c === CLOSE_ARRAY || c === CLOSE_OBJECT) {
      if (depth === 0) return i; // an empty element (`[1,]`): JSON.parse('') refuses it
      if (--depth === 0) return i + 1;
    } else if (depth === 0 && (c === COMMA || isJsonSpace(c))) {
      return i;
    }
  }
  if (depth > 0) throw new NotJsonArray();
  return i;
}

/** Index just past the string whose opening quote is at `i`. */
function stringEnd(text: string, i: number): number {
  for (let at = i + 1; ;) {
    const quote = text.indexOf('"', at);
    if (quote < 0) throw new NotJsonArray();
    let backslashes = 0;
    while (text.charCodeAt(quote - 1 - backslashes) === BACKSLASH) backslashes++;
    if (backslashes % 2 === 0) return quote + 1;
    at = quote + 1;
  }
}
