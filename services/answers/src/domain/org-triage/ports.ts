// The port of each organization's own triage: its categories, labelled examples, training
// jobs and model versions. Adapters: data-access/mysql-triage-store.ts (MySQL) and
// data-access/embedded-triage-store.ts (embedded mode), tested by one suite.
import type { TrainingReport } from './train-org-model.js';

export type ExampleSource = 'upload' | 'correction';

/** A labelled ticket of the training set. */
export interface TrainingExample {
  /** `u:<id>` or `t:<hash of the text>` for uploads, `ticket:<id>` for corrections. */
  key: string;
  text: string;
  label: string;
  source: ExampleSource;
}

export interface AutoRetrain {
  afterCorrections: number;
  activate: boolean;
}

export interface OrgTriageSettings {
  orgId: string;
  /** Empty when the organization defined none. */
  categories: string[];
  /** 0: the built-in classifier. */
  activeVersion: number;
  /** The version active before the current one (what a rollback activates); 0: built-in. */
  previousVersion: number;
  autoRetrain: AutoRetrain | null;
  correctionsSinceRun: number;
}

export interface ExampleCount {
  label: string;
  source: ExampleSource;
  count: number;
}

export type JobState = 'queued' | 'running' | 'succeeded' | 'failed';
export type JobTrigger = 'manual' | 'corrections';

export interface TrainingJob {
  id: string;
  orgId: string;
  state: JobState;
  trigger: JobTrigger;
  activate: boolean;
  phase: string;
  progress: number;
  createdAt: Date;
  startedAt: Date | null;
  finishedAt: Date | null;
  error: string | null;
  version: number | null;
  report: TrainingReport | null;
  activated: boolean;
  /** Runs started (a run whose replica died is taken up again). */
  attempts: number;
}

export interface ModelVersion {
  orgId: string;
  version: number;
  categories: string[];
  createdAt: Date;
  jobId: string;
  report: TrainingReport;
}

export interface StagedExample {
  line: number;
  key: string;
  text: string;
  label: string;
}

export interface CommitResult {
  added: number;
  updated: number;
}

/** How a training run ended: a model (a new version), or why not. */
export type JobOutcome =
  | { kind: 'succeeded'; model: string; categories: string[]; report: TrainingReport }
  | { kind: 'failed'; error: string };

/** Thrown by a store when an operation is refused (mapped to a clear client error). */
export class TriageStoreConflict extends Error {}

export interface TriageStore {
  settings(orgId: string): Promise<OrgTriageSettings>;
  setCategories(orgId: string, categories: string[], now: Date): Promise<void>;
  setAutoRetrain(orgId: string, autoRetrain: AutoRetrain | null, now: Date): Promise<void>;

  /** Adds rows to an upload not yet committed (created on its first batch). */
  stage(orgId: string, uploadId: string, rows: StagedExample[], now: Date): Promise<number>;
  /** The staged rows of an upload, in the order staged. */
  staged(orgId: string, uploadId: string): Promise<StagedExample[]>;
  /**
   * Moves the staged rows into the training set in one step (replace: the uploaded examples
   * held before are removed first; corrections stay), and forgets the upload.
   */
  commitUpload(orgId: string, uploadId: string, replace: boolean, now: Date): Promise<CommitResult>;
  discardUpload(orgId: string, uploadId: string): Promise<void>;
  /** Forgets uploads last staged to before `before` (clients that gave up); returns how many. */
  purgeUploads(before: Date): Promise<number>;

  /**
   * A person's label for a ticket (the example `ticket:<id>`, replaced by a later one);
   * counts towards the next automatic run. False when `eventId` was recorded already.
   */
  recordCorrection(
    orgId: string,
    ticketId: number,
    text: string,
    label: string,
    eventId: string,
    now: Date,
  ): Promise<boolean>;
  exampleCounts(orgId: string): Promise<ExampleCount[]>;
  examples(orgId: string): Promise<TrainingExample[]>;

  /**
   * Queues a run unless one is queued or running for the organization (TriageStoreConflict);
   * resets the corrections counted since the last run.
   */
  createJob(job: {
    id: string;
    orgId: string;
    trigger: JobTrigger;
    activate: boolean;
    now: Date;
  }): Promise<TrainingJob>;
  /**
   * Hands the oldest queued job (or a running one whose lease expired: its replica died) to
   * `owner` for `leaseMs`; undefined when none waits.
   */
  claimJob(owner: string, leaseMs: number, now: Date): Promise<TrainingJob | undefined>;
  /** Records progress and extends the lease; false when the job is no longer this owner's. */
  heartbeat(
    jobId: string,
    owner: string,
    phase: string,
    progress: number,
    leaseMs: number,
    now: Date,
  ): Promise<boolean>;
  /**
   * Ends a run: on success the model becomes a new version (activated when asked), all in one
   * step; on failure nothing but the job changes.
   */
  finishJob(
    jobId: string,
    owner: string,
    outcome: JobOutcome,
    now: Date,
  ): Promise<TrainingJob | undefined>;
  job(orgId: string, jobId: string): Promise<TrainingJob | undefined>;
  latestJob(orgId: string): Promise<TrainingJob | undefined>;

  versions(orgId: string): Promise<ModelVersion[]>;
  /** The model file of a version; undefined when there is no such version. */
  model(orgId: string, version: number): Promise<string | undefined>;
  /** Makes `version` (0: built-in) the active one; false when there is no such version. */
  activate(orgId: string, version: number, now: Date): Promise<boolean>;
  /** Every organization's active version (those with their own model only). */
  activeVersions(): Promise<Map<string, number>>;
  close(): Promise<void>;
}
