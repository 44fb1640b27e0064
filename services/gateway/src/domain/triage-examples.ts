// The rows of an upload of labelled tickets (admin API, POST …/triage/examples) and the JSON
// the admin API answers for an organization's triage. Which labels are allowed is the answers
// service's to check (it holds the organization's categories).
import type { answers } from '@support-agent/proto';
import { invalidRequest } from '@support-agent/shared';

/** One labelled ticket of an upload, at its line of the file. */
export interface TriageUploadRow {
  line: number;
  id: string;
  text: string;
  label: string;
}

/** Rows sent to the answers service per call. */
export const TRIAGE_UPLOAD_BATCH = 500;

const str = (v: unknown): string | undefined =>
  typeof v === 'string' ? v : typeof v === 'number' && Number.isFinite(v) ? String(v) : undefined;

/**
 * A row `{text | title + body, label | category, id?}` (JSON line or CSV record with those
 * columns); throws invalid_request naming the line when the row has no text or no label.
 */
export function parseTriageRow(line: number, value: unknown): TriageUploadRow {
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    throw invalidRequest(`line ${line}: expected a JSON object {text, label}`, 'examples');
  const v = value as Record<string, unknown>;
  const title = str(v.title)?.trim() ?? '';
  const body = str(v.body) ?? '';
  const text = str(v.text) ?? (title || body.trim() ? `${title}\n\n${body}` : undefined);
  if (text === undefined || !text.trim())
    throw invalidRequest(
      `line ${line}: the ticket text is missing (give "text", or "title" and "body")`,
      'examples',
    );
  const label = str(v.label) ?? str(v.category);
  if (label === undefined || !label.trim())
    throw invalidRequest(
      `line ${line}: the label is missing (give "label" or "category")`,
      'examples',
    );
  return { line, id: str(v.id)?.trim() ?? '', text, label: label.trim() };
}

function reportJson(r: answers.TriageTrainingReport | undefined): Record<string, unknown> | null {
  if (!r) return null;
  return {
    examples: r.examples,
    folds: r.folds,
    macro_f1: r.macroF1,
    accuracy: r.accuracy,
    categories: r.categories.map((c) => ({
      category: c.category,
      precision: c.precision,
      recall: c.recall,
      f1: c.f1,
      support: c.support,
    })),
    model_bytes: r.modelBytes,
    cpu_ms: r.cpuMs,
  };
}

const orNull = <T>(v: T | '' | 0): T | null => (v === '' || v === 0 ? null : v);

export function trainingJobJson(j: answers.TriageTrainingJob): Record<string, unknown> {
  return {
    id: j.id,
    state: j.state,
    trigger: j.trigger,
    activate: j.activate,
    phase: j.phase,
    progress: j.progress,
    created_at: j.createdAt,
    started_at: orNull(j.startedAt),
    finished_at: orNull(j.finishedAt),
    error: orNull(j.error),
    version: orNull(j.version),
    activated: j.activated,
    report: reportJson(j.report),
  };
}

export function triageStatusJson(s: answers.TriageStatus): Record<string, unknown> {
  return {
    org_id: s.orgId,
    categories: s.categories,
    active_categories: s.activeCategories,
    active_version: s.activeVersion === 0 ? 'builtin' : s.activeVersion,
    examples: s.examples.map((e) => ({
      category: e.category,
      uploaded: e.uploaded,
      corrections: e.corrections,
    })),
    examples_outside_categories: s.examplesOutsideCategories,
    auto_retrain: s.autoRetrain
      ? { after_corrections: s.autoRetrain.afterCorrections, activate: s.autoRetrain.activate }
      : null,
    corrections_since_last_run: s.correctionsSinceLastRun,
    latest_job: s.latestJob ? trainingJobJson(s.latestJob) : null,
  };
}

export function modelVersionJson(v: answers.TriageModelVersion): Record<string, unknown> {
  return {
    version: v.version,
    active: v.active,
    categories: v.categories,
    created_at: v.createdAt,
    job_id: v.jobId,
    report: reportJson(v.report),
  };
}

/** A version in a path: a positive integer, or `builtin` (0) for the built-in classifier. */
export function parseModelVersion(value: string): number {
  if (value === 'builtin') return 0;
  const n = /^[0-9]{1,9}$/.test(value) ? Number(value) : Number.NaN;
  if (!(n >= 1)) throw invalidRequest('version must be a positive integer or "builtin"', 'version');
  return n;
}

/** An optional flag: JSON true/false, or "true"/"false" in a query string. */
export function readFlag(value: unknown, param: string): boolean | undefined {
  if (value === undefined || value === null || value === '') return undefined;
  if (value === true || value === 'true') return true;
  if (value === false || value === 'false') return false;
  throw invalidRequest(`${param} must be true or false`, param);
}
