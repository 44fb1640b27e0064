import {
  AppError,
  codePointLength,
  invalidRequest,
  loneSurrogatePath,
} from '@support-agent/shared';

// Input rules of DESIGN.md §3, as small functions the operations compose:
// - lengths are counted in Unicode code points (as JSON Schema's maxLength counts them);
// - a string that is empty or only white space counts as missing;
// - integers are plain decimal integers in range (query) or JSON integers (body, MCP arguments);
// - a repeated query parameter is an error; unknown parameters and fields are ignored.
// The limits themselves (maxLength, minimum/maximum/default, enums, required) are not written
// here: agent-operations.ts takes them from the OpenAPI document (api-contract.ts).

/** Where a value came from; decides how repeats and types are judged. */
export type ParamLocation = 'query' | 'body' | 'header';

export interface ParamRule {
  param: string;
  in: ParamLocation;
}

export interface StringRule extends ParamRule {
  required?: boolean;
  /** Maximum length in code points. */
  maxLength: number;
}

export interface IntegerRule extends ParamRule {
  min: number;
  max: number;
  /** Used when the value is missing; without one the value is required. */
  default?: number;
}

export interface EnumRule<T extends string> extends ParamRule {
  values: readonly T[];
  required?: boolean;
}

export { codePointLength };

/** undefined, null, '' and white space only all mean "not given". */
export function isMissing(value: unknown): boolean {
  return (
    value === undefined || value === null || (typeof value === 'string' && value.trim() === '')
  );
}

/** Rejects a repeated query parameter (`?limit=1&limit=2` parses to an array). */
function single(value: unknown, rule: ParamRule): unknown {
  if (Array.isArray(value) && rule.in !== 'body') {
    throw invalidRequest(`${rule.param} must be given only once`, rule.param);
  }
  return value;
}

function requiredError(rule: ParamRule): AppError {
  return invalidRequest(`${rule.param} is required`, rule.param);
}

/** A string of 1..maxLength code points, or undefined when missing and optional. Not trimmed. */
export function readString(value: unknown, rule: StringRule & { required: true }): string;
export function readString(value: unknown, rule: StringRule): string | undefined;
export function readString(value: unknown, rule: StringRule): string | undefined {
  const v = single(value, rule);
  if (v !== undefined && v !== null && typeof v !== 'string') {
    throw invalidRequest(`${rule.param} must be a string`, rule.param);
  }
  if (isMissing(v)) {
    if (rule.required) throw requiredError(rule);
    return undefined;
  }
  const s = v as string;
  const length = codePointLength(s);
  if (length > rule.maxLength) {
    throw invalidRequest(
      `${rule.param} must be at most ${rule.maxLength} characters (got ${length})`,
      rule.param,
    );
  }
  return s;
}

/** An integer in [min, max]; the default when missing (absent, empty or white space). */
export function readInteger(value: unknown, rule: IntegerRule): number {
  const v = single(value, rule);
  if (isMissing(v)) {
    if (rule.default === undefined) throw requiredError(rule);
    return rule.default;
  }
  let n: number;
  if (typeof v === 'string' && rule.in !== 'body' && /^[0-9]+$/.test(v)) {
    n = Number(v);
  } else if (typeof v === 'number' && rule.in === 'body' && Number.isInteger(v)) {
    n = v;
  } else {
    n = Number.NaN;
  }
  if (!(n >= rule.min && n <= rule.max)) {
    throw invalidRequest(
      `${rule.param} must be an integer from ${rule.min} to ${rule.max}`,
      rule.param,
    );
  }
  return n;
}

/** A string matching the rule's pattern (and length), or undefined when missing. */
export function readPattern(
  value: unknown,
  rule: ParamRule & { maxLength: number; pattern: RegExp },
): string | undefined {
  const v = single(value, rule);
  if (isMissing(v)) return undefined;
  if (typeof v !== 'string' || codePointLength(v) > rule.maxLength || !rule.pattern.test(v)) {
    throw invalidRequest(
      `${rule.param} must be a category name: 1 to ${rule.maxLength} letters, digits, spaces or _ - . & + /, starting and ending with a letter or digit`,
      rule.param,
    );
  }
  return v;
}

/** One of the allowed values (case-sensitive), or undefined when missing and optional. */
export function readEnum<T extends string>(
  value: unknown,
  rule: EnumRule<T> & { required: true },
): T;
export function readEnum<T extends string>(value: unknown, rule: EnumRule<T>): T | undefined;
export function readEnum<T extends string>(value: unknown, rule: EnumRule<T>): T | undefined {
  const v = single(value, rule);
  if (isMissing(v)) {
    if (rule.required) throw requiredError(rule);
    return undefined;
  }
  if (typeof v !== 'string' || !(rule.values as readonly string[]).includes(v)) {
    throw invalidRequest(`${rule.param} must be one of: ${rule.values.join(', ')}`, rule.param);
  }
  return v as T;
}

/**
 * The error for text holding a lone UTF-16 surrogate: `param` names the field (`''` for the whole
 * value), `context` is put before the message (e.g. `line 3: `).
 */
export function loneSurrogateError(param: string, context = ''): AppError {
  return invalidRequest(
    `${context}${param || 'the request body'} must be valid Unicode text: it holds a lone UTF-16 surrogate (an escape such as \\ud800 without its pair)`,
    param || undefined,
  );
}

/**
 * Refuses a parsed JSON value holding a string with a lone surrogate, naming the field. Every
 * JSON body passes here once, so no field needs its own check.
 */
export function rejectLoneSurrogates(value: unknown, context = ''): void {
  const path = loneSurrogatePath(value);
  if (path !== undefined) throw loneSurrogateError(path, context);
}

/** A JSON body must be an object (not an array, string, number or null). */
export function requireObjectBody(body: unknown): Record<string, unknown> {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    throw invalidRequest('request body must be a JSON object');
  }
  return body as Record<string, unknown>;
}

// RFC 9651 sf-string: printable ASCII in double quotes, with \" and \\ as the only escapes.
const SF_STRING = /^"((?:[\x20\x21\x23-\x5B\x5D-\x7E]|\\["\\])*)"$/;
// A bare value (sf-token or an unquoted UUID and the like): visible ASCII, no quotes/commas.
const BARE_TOKEN = /^[\x21\x23-\x2B\x2D-\x7E]+$/;

/**
 * The `Idempotency-Key` header: a structured-field string (`"abc"`, unescaped) or a bare token
 * of at most maxLength code points once unquoted. undefined when absent or empty.
 */
export function readIdempotencyKeyHeader(value: unknown, maxLength: number): string | undefined {
  const param = 'Idempotency-Key';
  const v = single(value, { param, in: 'header' });
  if (isMissing(v)) return undefined;
  const raw = (v as string).trim();
  let key: string;
  const quoted = SF_STRING.exec(raw);
  if (quoted) {
    key = quoted[1]!.replace(/\\(["\\])/g, '$1');
  } else if (BARE_TOKEN.test(raw)) {
    key = raw;
  } else {
    throw invalidRequest(
      `${param} must be a structured-field string ("...") or a token of visible ASCII characters`,
      param,
    );
  }
  if (isMissing(key)) return undefined;
  const length = codePointLength(key);
  if (length > maxLength) {
    throw invalidRequest(`${param} must be at most ${maxLength} characters (got ${length})`, param);
  }
  return key;
}
