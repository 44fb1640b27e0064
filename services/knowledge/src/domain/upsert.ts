import { AppError, TimeSlicer } from '@support-agent/shared';
import { sha256Hex } from './hashing.js';
import type { EntryText, IndexedEntry, StoredEntry } from './ports.js';
import { documentTerms } from './scoring.js';
import type { KnowledgeDeps } from './search.js';
import { isZero } from './search.js';
import {
  messageOf,
  validateBatchSize,
  validateEntry,
  validateEntryId,
  validateOrgId,
  type EntryInput,
  type ValidEntry,
} from './validation.js';

export interface EntryFailure {
  /** Index of the entry in the request (0-based). */
  index: number;
  message: string;
}

export interface UpsertOutcome {
  inserted: number;
  updated: number;
  failed: EntryFailure[];
}

/** Entries written to the index per call. */
const WRITE_CHUNK = 256;

/** Identity of an entry's text: unchanged text is not embedded again. */
export function contentHash(entry: EntryText): string {
  return sha256Hex(JSON.stringify([entry.question, entry.answer, entry.tags]));
}

/** Embeds and indexes entries whose text is given (used by upsert and re-indexing). */
export async function indexEntries(
  deps: Pick<KnowledgeDeps, 'embeddings'>,
  entries: StoredEntry[],
): Promise<IndexedEntry[]> {
  if (entries.length === 0) return [];
  const vectors = await deps.embeddings.embedDocuments(entries);
  // Term extraction is CPU work too: sliced, so other callers' searches run in between.
  const slicer = new TimeSlicer();
  const out: IndexedEntry[] = [];
  for (let i = 0; i < entries.length; i++) {
    await slicer.next();
    const entry = entries[i]!;
    const dense = vectors[i]!;
    // An entry of stop words only embeds to zero; give it a direction so cosine is defined.
    if (isZero(dense)) dense[0] = 1;
    const { sparse, terms } = documentTerms(entry);
    out.push({ ...entry, dense, sparse, terms });
  }
  return out;
}

/**
 * Upserts a batch, idempotent by the caller's entry id. Invalid entries and
 * repeated ids (after their first occurrence) are reported with their request
 * index and skipped; the rest are written. Re-sending an unchanged entry counts
 * as updated without embedding it again.
 */
export async function upsertEntries(
  deps: KnowledgeDeps,
  orgIdInput: string | undefined,
  inputs: EntryInput[],
): Promise<UpsertOutcome> {
  const orgId = validateOrgId(orgIdInput);
  validateBatchSize(inputs.length, 'entries');

  const failed: EntryFailure[] = [];
  const valid: { index: number; entry: ValidEntry }[] = [];
  const firstIndexOf = new Map<string, number>();
  inputs.forEach((input, index) => {
    try {
      const entry = validateEntry(input);
      const first = firstIndexOf.get(entry.id);
      if (first !== undefined) {
        failed.push({ index, message: `duplicate id "${entry.id}" (first at index ${first})` });
        return;
      }
      firstIndexOf.set(entry.id, index);
      valid.push({ index, entry });
    } catch (err) {
      if (!(err instanceof AppError) || !err.isTrusted) throw err;
      failed.push({ index, message: messageOf(err) });
    }
  });

  let inserted = 0;
  let updated = 0;
  const now = deps.now();
  for (let start = 0; start < valid.length; start += WRITE_CHUNK) {
    const chunk = valid.slice(start, start + WRITE_CHUNK);
    const versions = await deps.index.versions(
      orgId,
      chunk.map((c) => c.entry.id),
    );
    const changed: StoredEntry[] = [];
    for (const { entry } of chunk) {
      const hash = contentHash(entry);
      if (versions.get(entry.id)?.contentHash === hash) updated++;
      else changed.push({ ...entry, updatedAt: now, contentHash: hash });
    }
    const indexed = await indexEntries(deps, changed);
    const outcomes = indexed.length > 0 ? await deps.index.upsert(orgId, indexed) : [];
    for (const o of outcomes) {
      if (o === 'inserted') inserted++;
      else updated++;
    }
  }
  failed.sort((a, b) => a.index - b.index);
  return { inserted, updated, failed };
}

/** Deletes entries by id; returns how many existed. */
export async function deleteEntries(
  deps: KnowledgeDeps,
  orgIdInput: string | undefined,
  ids: string[],
): Promise<number> {
  const orgId = validateOrgId(orgIdInput);
  validateBatchSize(ids.length, 'ids');
  const unique = [...new Set(ids.map((id) => validateEntryId(id, 'ids')))];
  if (unique.length === 0) return 0;
  return deps.index.delete(orgId, unique);
}

export async function countEntries(
  deps: KnowledgeDeps,
  orgIdInput: string | undefined,
): Promise<number> {
  return deps.index.count(validateOrgId(orgIdInput));
}
