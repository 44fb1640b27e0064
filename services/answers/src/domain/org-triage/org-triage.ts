// The use-cases of each organization's own triage, as the admin API drives them: categories,
// uploads of labelled tickets, people's corrections, training runs and model versions.
import { createHash, randomUUID } from 'node:crypto';
import { AppError, invalidRequest, type Logger } from '@support-agent/shared';
import { truncateCodePoints } from '../text.js';
import { CATEGORIES as TICKET_CATEGORIES } from '../ports.js';
import { parseCategories, unknownLabelMessage } from './categories.js';
import {
  TriageStoreConflict,
  type AutoRetrain,
  type ExampleCount,
  type JobTrigger,
  type OrgTriageSettings,
  type StagedExample,
  type TrainingJob,
  type TriageStore,
} from './ports.js';
import { trainingSetProblem } from './train-org-model.js';

/** Text kept of an example: the classifier reads no further (triage-features MAX_CLASSIFIED_CHARS). */
export const EXAMPLE_TEXT_MAX = 12_000;
/** Most examples one organization holds (uploads and corrections together). */
export const MAX_EXAMPLES = 50_000;
/** Most rows of one batch of an upload. */
export const STAGE_BATCH_MAX = 1_000;
const EXAMPLE_ID_MAX = 100;

export interface TriageStatusView {
  settings: OrgTriageSettings;
  /** The categories tickets get now: the active model's, or the built-in five. */
  activeCategories: string[];
  counts: ExampleCount[];
  latestJob: TrainingJob | undefined;
}

/** One row of an upload as the gateway read it. */
export interface UploadRow {
  line: number;
  id: string;
  text: string;
  label: string;
}

export interface OrgTriageDeps {
  store: TriageStore;
  logger: Logger;
  now: () => Date;
  /** Called when a run is queued, so a worker takes it up without waiting for its next poll. */
  jobQueued?: () => void;
  /** Called after an activation, so this replica's models follow at once. */
  activated?: () => void;
}

const requireOrg = (orgId: string) => {
  if (!orgId || orgId.length > 64) throw invalidRequest('org_id is required', 'org_id');
  return orgId;
};

export async function triageStatus(deps: OrgTriageDeps, orgId: string): Promise<TriageStatusView> {
  requireOrg(orgId);
  const [settings, counts, latestJob] = await Promise.all([
    deps.store.settings(orgId),
    deps.store.exampleCounts(orgId),
    deps.store.latestJob(orgId),
  ]);
  const active = settings.activeVersion
    ? (await deps.store.versions(orgId)).find((v) => v.version === settings.activeVersion)
    : undefined;
  return {
    settings,
    activeCategories: active?.categories ?? [...TICKET_CATEGORIES],
    counts,
    latestJob,
  };
}

export async function setTriageCategories(
  deps: OrgTriageDeps,
  orgId: string,
  categories: readonly string[],
): Promise<void> {
  requireOrg(orgId);
  await deps.store.setCategories(orgId, parseCategories(categories), deps.now());
}

/** What an example is known by: its id in the upload, else its text. */
function exampleKey(row: UploadRow): string {
  if (row.id) return `u:${row.id}`;
  return `t:${createHash('sha256').update(row.text).digest('base64url').slice(0, 32)}`;
}

/**
 * Checks one batch of an upload row by row and stages it. The first bad row refuses the whole
 * upload: what was staged is discarded and the error names the line (and, for a label, the
 * categories allowed).
 */
export async function stageExamples(
  deps: OrgTriageDeps,
  orgId: string,
  uploadId: string,
  rows: UploadRow[],
): Promise<number> {
  requireOrg(orgId);
  if (!/^[A-Za-z0-9_-]{8,64}$/.test(uploadId))
    throw invalidRequest('upload_id must be 8 to 64 letters, digits, _ or -', 'upload_id');
  if (rows.length > STAGE_BATCH_MAX)
    throw invalidRequest(`at most ${STAGE_BATCH_MAX} rows per batch`, 'examples');
  const { categories } = await deps.store.settings(orgId);
  const refuse = async (message: string): Promise<never> => {
    await deps.store.discardUpload(orgId, uploadId);
    throw invalidRequest(message, 'examples');
  };
  if (categories.length === 0)
    await refuse(
      `the organization has no categories yet: define them first (triage categories ${orgId} <name>…)`,
    );
  const staged: StagedExample[] = [];
  for (const row of rows) {
    if (!row.text.trim()) await refuse(`line ${row.line}: the ticket text is empty`);
    if (!row.label.trim()) await refuse(`line ${row.line}: the label is missing`);
    if (!categories.includes(row.label))
      await refuse(unknownLabelMessage(row.line, row.label, categories));
    if ([...row.id].length > EXAMPLE_ID_MAX)
      await refuse(`line ${row.line}: id is longer than ${EXAMPLE_ID_MAX} characters`);
    const text = truncateCodePoints(row.text, EXAMPLE_TEXT_MAX);
    staged.push({ line: row.line, key: exampleKey({ ...row, text }), text, label: row.label });
  }
  try {
    return await deps.store.stage(orgId, uploadId, staged, deps.now());
  } catch (err) {
    if (err instanceof TriageStoreConflict) throw invalidRequest(err.message, 'upload_id');
    throw err;
  }
}

/**
 * Adds a staged upload to the training set, all of it at once; refuses (and forgets) an empty
 * one, one whose rows are all of one category, or one that would take the organization past
 * MAX_EXAMPLES.
 */
export async function commitUpload(
  deps: OrgTriageDeps,
  orgId: string,
  uploadId: string,
  replace: boolean,
): Promise<{ added: number; updated: number }> {
  requireOrg(orgId);
  const rows = await deps.store.staged(orgId, uploadId);
  const refuse = async (message: string): Promise<never> => {
    await deps.store.discardUpload(orgId, uploadId);
    throw invalidRequest(message, 'examples');
  };
  if (rows.length === 0) await refuse('the upload holds no labelled tickets');
  const labels = new Set(rows.map((r) => r.label));
  if (labels.size < 2)
    await refuse(
      `every ticket of the upload is labelled "${rows[0]!.label}": an upload must hold at least two categories, so that a model can learn to tell them apart`,
    );
  const counts = await deps.store.exampleCounts(orgId);
  const held = counts.reduce((s, c) => s + (replace && c.source === 'upload' ? 0 : c.count), 0);
  const keys = new Set(rows.map((r) => r.key)).size;
  if (held + keys > MAX_EXAMPLES)
    await refuse(
      `the organization would hold ${held + keys} examples; at most ${MAX_EXAMPLES} are kept (upload with replace, or fewer)`,
    );
  return deps.store.commitUpload(orgId, uploadId, replace, deps.now());
}

export async function discardUpload(
  deps: OrgTriageDeps,
  orgId: string,
  uploadId: string,
): Promise<void> {
  await deps.store.discardUpload(requireOrg(orgId), uploadId);
}

/**
 * Queues a training run: refused (conflict) when the organization has no categories, when its
 * examples cannot train a model, or when a run is already queued or running.
 */
export async function startTraining(
  deps: OrgTriageDeps,
  orgId: string,
  activate: boolean,
  trigger: JobTrigger = 'manual',
): Promise<TrainingJob> {
  requireOrg(orgId);
  const { categories } = await deps.store.settings(orgId);
  if (categories.length === 0)
    throw new AppError('conflict', 'the organization has no categories yet: define them first');
  const counts = await deps.store.exampleCounts(orgId);
  const perLabel = new Map<string, number>();
  for (const c of counts) perLabel.set(c.label, (perLabel.get(c.label) ?? 0) + c.count);
  const problem = trainingSetProblem(perLabel, categories);
  if (problem) throw new AppError('conflict', `cannot train: ${problem}`);
  try {
    const job = await deps.store.createJob({
      id: `trn_${randomUUID().replace(/-/g, '')}`,
      orgId,
      trigger,
      activate,
      now: deps.now(),
    });
    deps.jobQueued?.();
    return job;
  } catch (err) {
    if (err instanceof TriageStoreConflict) throw new AppError('conflict', err.message);
    throw err;
  }
}

export async function trainingJob(
  deps: OrgTriageDeps,
  orgId: string,
  jobId: string,
): Promise<TrainingJob> {
  const job = await deps.store.job(requireOrg(orgId), jobId);
  if (!job) throw new AppError('not_found', `no training run ${jobId} in organization ${orgId}`);
  return job;
}

/** Makes a version (0: the built-in classifier) the active one. */
export async function activateVersion(
  deps: OrgTriageDeps,
  orgId: string,
  version: number,
): Promise<void> {
  requireOrg(orgId);
  if (!Number.isInteger(version) || version < 0)
    throw invalidRequest('version must be a non-negative integer', 'version');
  if (!(await deps.store.activate(orgId, version, deps.now())))
    throw new AppError('not_found', `organization ${orgId} has no model version ${version}`);
  deps.activated?.();
}

/** Activates the version that was active before the current one. */
export async function rollback(deps: OrgTriageDeps, orgId: string): Promise<void> {
  const settings = await deps.store.settings(requireOrg(orgId));
  if (settings.activeVersion === 0 && settings.previousVersion === 0)
    throw new AppError('conflict', 'nothing to roll back: the built-in classifier is active');
  await activateVersion(deps, orgId, settings.previousVersion);
}

export async function setAutoRetrain(
  deps: OrgTriageDeps,
  orgId: string,
  auto: AutoRetrain | null,
): Promise<void> {
  requireOrg(orgId);
  if (
    auto &&
    !(
      Number.isInteger(auto.afterCorrections) &&
      auto.afterCorrections >= 1 &&
      auto.afterCorrections <= 100_000
    )
  )
    throw invalidRequest(
      'after_corrections must be an integer from 1 to 100000 (0 turns it off)',
      'after_corrections',
    );
  await deps.store.setAutoRetrain(orgId, auto, deps.now());
}

export async function modelFile(
  deps: OrgTriageDeps,
  orgId: string,
  version: number,
): Promise<string> {
  const model = await deps.store.model(requireOrg(orgId), version);
  if (model === undefined)
    throw new AppError('not_found', `organization ${orgId} has no model version ${version}`);
  return model;
}

/**
 * A person's label for a ticket joins the organization's training set (a later label of the
 * same ticket replaces it); once the organization's automatic retraining threshold is reached,
 * a run starts. A label outside the organization's categories is kept out (logged).
 */
export async function recordCorrection(
  deps: OrgTriageDeps,
  correction: { orgId: string; ticketId: number; eventId: string; text: string; label: string },
): Promise<'recorded' | 'repeat' | 'ignored'> {
  const { orgId, ticketId, eventId, label } = correction;
  const settings = await deps.store.settings(orgId);
  const allowed = settings.categories.length > 0 ? settings.categories : [...TICKET_CATEGORIES];
  if (!allowed.includes(label) || !correction.text.trim()) {
    deps.logger.warn(
      { orgId, ticketId, label },
      'correction outside the organization categories: not learned',
    );
    return 'ignored';
  }
  const text = truncateCodePoints(correction.text, EXAMPLE_TEXT_MAX);
  if (!(await deps.store.recordCorrection(orgId, ticketId, text, label, eventId, deps.now())))
    return 'repeat';
  const after = await deps.store.settings(orgId);
  if (after.autoRetrain && after.correctionsSinceRun >= after.autoRetrain.afterCorrections) {
    try {
      const job = await startTraining(deps, orgId, after.autoRetrain.activate, 'corrections');
      deps.logger.info({ orgId, jobId: job.id }, 'training run started by corrections');
    } catch (err) {
      // A run already under way, or a set that cannot train yet: the next correction tries again.
      deps.logger.info(
        { orgId, reason: (err as Error).message },
        'automatic training run not started',
      );
    }
  }
  return 'recorded';
}
