import type { knowledge } from '@support-agent/proto';
import { AppError, codePointLength, invalidRequest, TimeSlicer } from '@support-agent/shared';

/** Limits of one KB entry as the admin API accepts it; lengths in code points. */
export const KB_LIMITS = {
  idMax: 200,
  questionMax: 2000,
  answerMax: 10_000,
  tagsMax: 20,
  tagMax: 50,
} as const;

/** Entry ids are path-safe (they appear in `DELETE …/kb/entries/{id}`) and unambiguous. */
export const KB_ENTRY_ID_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._:-]*$/;

/**
 * Entries per UpsertEntries call: each call embeds its batch before it returns. Small enough
 * that encoding, decoding and journaling one call (about 130 KB of 2 KB entries) is a short
 * pause for both services' other requests.
 */
export const KB_UPSERT_BATCH = 64;

export type KbEntry = knowledge.KbEntry;

/** One row of an import: its 1-based line (JSON lines) or position (JSON array). */
export type KbImportRow = { line: number; value: unknown } | { line: number; error: string };

export interface KbRowFailure {
  line: number;
  message: string;
}

export interface KbImportResult {
  inserted: number;
  updated: number;
  failed: KbRowFailure[];
}

/** The part of the knowledge service an import writes to. */
export interface KbWriter {
  upsertEntries(
    request: knowledge.UpsertEntriesRequest,
    requestId?: string,
  ): Promise<knowledge.UpsertEntriesResponse>;
}

function requiredText(value: unknown, param: string, max: number): string {
  if (value === undefined || value === null || (typeof value === 'string' && !value.trim())) {
    throw invalidRequest(`${param} is required`, param);
  }
  if (typeof value !== 'string') throw invalidRequest(`${param} must be a string`, param);
  const length = codePointLength(value);
  if (length > max) {
    throw invalidRequest(`${param} must be at most ${max} characters (got ${length})`, param);
  }
  return value;
}

/** An entry id: a string (or a non-negative integer, as exports often have) of the safe pattern. */
export function parseKbEntryId(value: unknown, param = 'id'): string {
  const id =
    typeof value === 'number' && Number.isSafeInteger(value) && value >= 0
      ? String(value)
      : requiredText(value, param, KB_LIMITS.idMax);
  if (!KB_ENTRY_ID_PATTERN.test(id)) {
    throw invalidRequest(
      `${param} may hold only letters, digits, '.', '_', ':' and '-', starting with a letter or digit`,
      param,
    );
  }
  return id;
}

/**
 * Validates one entry `{id, question, answer, tags?}`; unknown fields are ignored. Question and
 * answer are kept verbatim; tags are trimmed, blank ones dropped, repeats removed.
 */
export function parseKbEntry(value: unknown): KbEntry {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw invalidRequest('entry must be a JSON object');
  }
  const v = value as Record<string, unknown>;
  const id = parseKbEntryId(v.id);
  const question = requiredText(v.question, 'question', KB_LIMITS.questionMax);
  const answer = requiredText(v.answer, 'answer', KB_LIMITS.answerMax);
  return { id, question, answer, tags: parseTags(v.tags) };
}

function parseTags(value: unknown): string[] {
  if (value === undefined || value === null) return [];
  if (!Array.isArray(value) || value.some((t) => typeof t !== 'string')) {
    throw invalidRequest('tags must be an array of strings', 'tags');
  }
  const tags = [...new Set((value as string[]).map((t) => t.trim()).filter(Boolean))];
  if (tags.length > KB_LIMITS.tagsMax) {
    throw invalidRequest(`tags must hold at most ${KB_LIMITS.tagsMax} tags`, 'tags');
  }
  if (tags.some((t) => codePointLength(t) > KB_LIMITS.tagMax)) {
    throw invalidRequest(`each tag must be at most ${KB_LIMITS.tagMax} characters`, 'tags');
  }
  return tags;
}

/**
 * Imports rows into an organization's KB: invalid rows are reported with their line and
 * skipped, a repeated id keeps its last valid row (written once), and the rest is upserted
 * in batches whose per-entry failures are mapped back to lines. Upserts are idempotent by id,
 * so re-importing reports the same rows as updated. An upstream error aborts the import
 * (batches already written stay written; running it again is safe).
 */
export async function importKbEntries(
  writer: KbWriter,
  orgId: string,
  rows: KbImportRow[],
  options: { batchSize?: number; requestId?: string } = {},
): Promise<KbImportResult> {
  const batchSize = options.batchSize ?? KB_UPSERT_BATCH;
  const failed: KbRowFailure[] = [];
  const byId = new Map<string, { line: number; entry: KbEntry }>();
  // Validated in time slices: other requests are served between them.
  const slicer = new TimeSlicer();
  for (const row of rows) {
    await slicer.next();
    if ('error' in row) {
      failed.push({ line: row.line, message: row.error });
      continue;
    }
    try {
      const entry = parseKbEntry(row.value);
      byId.delete(entry.id); // keep the last occurrence, at its position
      byId.set(entry.id, { line: row.line, entry });
    } catch (err) {
      if (!(err instanceof AppError) || !err.isTrusted) throw err;
      failed.push({ line: row.line, message: err.message });
    }
  }

  const valid = [...byId.values()];
  let inserted = 0;
  let updated = 0;
  for (let start = 0; start < valid.length; start += batchSize) {
    const batch = valid.slice(start, start + batchSize);
    const res = await writer.upsertEntries(
      { orgId, entries: batch.map((b) => b.entry) },
      options.requestId,
    );
    inserted += res.inserted;
    updated += res.updated;
    for (const f of res.failed) {
      const row = batch[f.index];
      if (!row) throw new Error(`knowledge service reported a failure at unknown index ${f.index}`);
      failed.push({ line: row.line, message: f.message });
    }
  }
  failed.sort((a, b) => a.line - b.line);
  return { inserted, updated, failed };
}
