import { unaryHandler, type Logger } from '@support-agent/shared';
import type { answers } from '@support-agent/proto';
import {
  activateVersion,
  commitUpload,
  discardUpload,
  modelFile,
  rollback,
  setAutoRetrain,
  setTriageCategories,
  stageExamples,
  startTraining,
  trainingJob,
  triageStatus,
  type OrgTriageDeps,
  type TriageStatusView,
} from '../../domain/org-triage/org-triage.js';
import type { ModelVersion, TrainingJob } from '../../domain/org-triage/ports.js';
import type { TrainingReport } from '../../domain/org-triage/train-org-model.js';

const iso = (d: Date | null) => (d ? d.toISOString() : '');

function reportMessage(r: TrainingReport): answers.TriageTrainingReport {
  return {
    examples: r.examples,
    folds: r.folds,
    macroF1: r.macroF1,
    accuracy: r.accuracy,
    categories: r.categories.map((c) => ({ ...c })),
    l2: r.l2,
    modelBytes: r.modelBytes ?? 0,
    cpuMs: r.cpuMs ?? 0,
  };
}

export function jobMessage(j: TrainingJob): answers.TriageTrainingJob {
  return {
    id: j.id,
    orgId: j.orgId,
    state: j.state,
    trigger: j.trigger,
    activate: j.activate,
    phase: j.phase,
    progress: j.progress,
    createdAt: iso(j.createdAt),
    startedAt: iso(j.startedAt),
    finishedAt: iso(j.finishedAt),
    error: j.error ?? '',
    version: j.version ?? 0,
    report: j.report ? reportMessage(j.report) : undefined,
    activated: j.activated,
  };
}

function statusMessage(v: TriageStatusView): answers.TriageStatus {
  const { settings, counts } = v;
  const inCategories = new Set(settings.categories);
  return {
    orgId: settings.orgId,
    categories: settings.categories,
    activeCategories: v.activeCategories,
    examples: settings.categories.map((category) => ({
      category,
      uploaded: counts.find((c) => c.label === category && c.source === 'upload')?.count ?? 0,
      corrections:
        counts.find((c) => c.label === category && c.source === 'correction')?.count ?? 0,
    })),
    examplesOutsideCategories: counts
      .filter((c) => !inCategories.has(c.label))
      .reduce((s, c) => s + c.count, 0),
    activeVersion: settings.activeVersion,
    autoRetrain: settings.autoRetrain ?? undefined,
    correctionsSinceLastRun: settings.correctionsSinceRun,
    latestJob: v.latestJob ? jobMessage(v.latestJob) : undefined,
  };
}

function versionMessage(v: ModelVersion, active: number): answers.TriageModelVersion {
  return {
    version: v.version,
    categories: v.categories,
    createdAt: iso(v.createdAt),
    jobId: v.jobId,
    report: reportMessage(v.report),
    active: v.version === active,
  };
}

/** The TriageService: each organization's own triage (docs/triage.md), for the admin API. */
export function createTriageHandlers(
  deps: OrgTriageDeps,
  logger: Logger,
): answers.TriageServiceServer {
  const status = async (orgId: string) => statusMessage(await triageStatus(deps, orgId));
  return {
    getTriageStatus: unaryHandler(
      logger,
      'GetTriageStatus',
      (req: answers.GetTriageStatusRequest) => status(req.orgId),
    ),
    setTriageCategories: unaryHandler(
      logger,
      'SetTriageCategories',
      async (req: answers.SetTriageCategoriesRequest) => {
        await setTriageCategories(deps, req.orgId, req.categories);
        return status(req.orgId);
      },
    ),
    stageTriageExamples: unaryHandler(
      logger,
      'StageTriageExamples',
      async (req: answers.StageTriageExamplesRequest) => ({
        staged: await stageExamples(deps, req.orgId, req.uploadId, req.examples),
      }),
    ),
    commitTriageUpload: unaryHandler(
      logger,
      'CommitTriageUpload',
      async (req: answers.CommitTriageUploadRequest) => {
        const result = await commitUpload(deps, req.orgId, req.uploadId, req.replace);
        return { ...result, status: await status(req.orgId) };
      },
    ),
    discardTriageUpload: unaryHandler(
      logger,
      'DiscardTriageUpload',
      async (req: answers.DiscardTriageUploadRequest) => {
        await discardUpload(deps, req.orgId, req.uploadId);
        return {};
      },
    ),
    startTriageTraining: unaryHandler(
      logger,
      'StartTriageTraining',
      async (req: answers.StartTriageTrainingRequest) =>
        jobMessage(await startTraining(deps, req.orgId, req.activate)),
    ),
    getTriageTrainingJob: unaryHandler(
      logger,
      'GetTriageTrainingJob',
      async (req: answers.GetTriageTrainingJobRequest) =>
        jobMessage(await trainingJob(deps, req.orgId, req.jobId)),
    ),
    listTriageModelVersions: unaryHandler(
      logger,
      'ListTriageModelVersions',
      async (req: answers.ListTriageModelVersionsRequest) => {
        const { settings } = await triageStatus(deps, req.orgId);
        const versions = await deps.store.versions(req.orgId);
        return {
          versions: versions.map((v) => versionMessage(v, settings.activeVersion)),
          activeVersion: settings.activeVersion,
        };
      },
    ),
    activateTriageModelVersion: unaryHandler(
      logger,
      'ActivateTriageModelVersion',
      async (req: answers.ActivateTriageModelVersionRequest) => {
        await activateVersion(deps, req.orgId, req.version);
        return status(req.orgId);
      },
    ),
    rollbackTriageModel: unaryHandler(
      logger,
      'RollbackTriageModel',
      async (req: answers.RollbackTriageModelRequest) => {
        await rollback(deps, req.orgId);
        return status(req.orgId);
      },
    ),
    setTriageAutoRetrain: unaryHandler(
      logger,
      'SetTriageAutoRetrain',
      async (req: answers.SetTriageAutoRetrainRequest) => {
        await setAutoRetrain(
          deps,
          req.orgId,
          req.afterCorrections > 0
            ? { afterCorrections: req.afterCorrections, activate: req.activate }
            : null,
        );
        return status(req.orgId);
      },
    ),
    getTriageModel: unaryHandler(
      logger,
      'GetTriageModel',
      async (req: answers.GetTriageModelRequest) => ({
        modelJson: await modelFile(deps, req.orgId, req.version),
      }),
    ),
  };
}
