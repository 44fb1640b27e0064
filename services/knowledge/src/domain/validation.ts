import { AppError, codePointLength, invalidRequest, isBlank } from '@support-agent/shared';

/** Limits of the knowledge contract; lengths are Unicode code points (DESIGN.md §3). */
export const LIMITS = {
  queryMax: 2000,
  limitMax: 20,
  limitDefault: 5,
  orgIdMax: 128,
  entryIdMax: 200,
  questionMax: 2000,
  answerMax: 20_000,
  tagsMax: 20,
  tagMax: 100,
  /** Entries per UpsertEntries call, ids per DeleteEntries call, texts per Embed call. */
  batchMax: 1000,
  embedTextMax: 20_000,
} as const;

/** Org ids are slugs or generated ids; ':' is excluded so `${org}:${entry}` is unambiguous. */
const ORG_ID = /^[A-Za-z0-9][A-Za-z0-9_.-]*$/;
const CONTROL = /[\u0000-\u001f\u007f]/;

export function validateOrgId(value: string | undefined): string {
  if (isBlank(value)) throw invalidRequest('org_id is required', 'org_id');
  if (codePointLength(value!) > LIMITS.orgIdMax || !ORG_ID.test(value!)) {
    throw invalidRequest('org_id is not a valid organization id', 'org_id');
  }
  return value!;
}

export function validateQuery(value: string | undefined): string {
  if (isBlank(value)) throw invalidRequest('query is required', 'query');
  if (codePointLength(value!) > LIMITS.queryMax) {
    throw invalidRequest(`query must be at most ${LIMITS.queryMax} characters`, 'query');
  }
  return value!;
}

/** 0 (proto default) means the default limit. */
export function validateLimit(value: number | undefined): number {
  if (value === undefined || value === 0) return LIMITS.limitDefault;
  if (!Number.isInteger(value) || value < 1 || value > LIMITS.limitMax) {
    throw invalidRequest(`limit must be an integer from 1 to ${LIMITS.limitMax}`, 'limit');
  }
  return value;
}

export function validateEntryId(value: string | undefined, param = 'id'): string {
  if (isBlank(value)) throw invalidRequest(`${param} is required`, param);
  if (codePointLength(value!) > LIMITS.entryIdMax) {
    throw invalidRequest(`${param} must be at most ${LIMITS.entryIdMax} characters`, param);
  }
  if (CONTROL.test(value!))
    throw invalidRequest(`${param} must not contain control characters`, param);
  return value!;
}

export interface EntryInput {
  id?: string;
  question?: string;
  answer?: string;
  tags?: string[];
}

export interface ValidEntry {
  id: string;
  question: string;
  answer: string;
  tags: string[];
}

function requireText(value: string | undefined, param: string, max: number): string {
  if (isBlank(value)) throw invalidRequest(`${param} is required`, param);
  if (codePointLength(value!) > max)
    throw invalidRequest(`${param} must be at most ${max} characters`, param);
  return value!;
}

/** One entry of an upsert; text is stored verbatim, tags trimmed and de-duplicated. */
export function validateEntry(input: EntryInput): ValidEntry {
  const id = validateEntryId(input.id);
  const question = requireText(input.question, 'question', LIMITS.questionMax);
  const answer = requireText(input.answer, 'answer', LIMITS.answerMax);
  const tags: string[] = [];
  for (const raw of input.tags ?? []) {
    const tag = raw.trim();
    if (tag.length === 0) continue;
    if (codePointLength(tag) > LIMITS.tagMax)
      throw invalidRequest(`tags must be at most ${LIMITS.tagMax} characters each`, 'tags');
    if (!tags.includes(tag)) tags.push(tag);
  }
  if (tags.length > LIMITS.tagsMax)
    throw invalidRequest(`at most ${LIMITS.tagsMax} tags per entry`, 'tags');
  return { id, question, answer, tags };
}

export function validateBatchSize(size: number, param: string): void {
  if (size > LIMITS.batchMax) {
    throw invalidRequest(`at most ${LIMITS.batchMax} ${param} per call`, param);
  }
}

/** Message of a validation error, for per-entry failures. */
export function messageOf(err: unknown): string {
  return err instanceof AppError && err.isTrusted ? err.message : 'invalid entry';
}
