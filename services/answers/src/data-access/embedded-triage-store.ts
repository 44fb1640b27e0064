import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { JournaledStore, writeFileAtomic, type Logger } from '@support-agent/shared';
import {
  TriageStoreConflict,
  type AutoRetrain,
  type CommitResult,
  type ExampleCount,
  type JobOutcome,
  type ModelVersion,
  type OrgTriageSettings,
  type StagedExample,
  type TrainingExample,
  type TrainingJob,
  type TriageStore,
} from '../domain/org-triage/ports.js';

type JobRecord = Omit<TrainingJob, 'createdAt' | 'startedAt' | 'finishedAt'> & {
  createdAt: number;
  startedAt: number | null;
  finishedAt: number | null;
};

type Record =
  | { t: 'categories'; org: string; categories: string[] }
  | { t: 'auto'; org: string; auto: AutoRetrain | null }
  | {
      t: 'upload';
      org: string;
      replace: boolean;
      rows: { k: string; x: string; l: string }[];
    }
  | { t: 'correction'; org: string; event: string; ticket: number; x: string; l: string }
  | { t: 'job'; job: JobRecord }
  | {
      t: 'version';
      org: string;
      version: number;
      job: string;
      categories: string[];
      report: ModelVersion['report'];
      at: number;
      activate: boolean;
    }
  | { t: 'activate'; org: string; version: number };

interface OrgState {
  settings: OrgTriageSettings;
  examples: Map<string, TrainingExample>;
  versions: ModelVersion[];
}

/**
 * Each organization's own triage for embedded mode (`npm start`): state in memory, every change
 * journaled (fsynced) to DATA_DIR/answers/triage.jsonl before it takes effect; model files
 * under DATA_DIR/answers/triage-models/<org>/<version>.json, written (atomically) before the
 * version is journaled. Uploads being staged and job progress live in memory only: a restart
 * forgets an unfinished upload (nothing of it was added) and queues an unfinished run again.
 */
export class EmbeddedTriageStore extends JournaledStore<Record> implements TriageStore {
  private readonly orgs = new Map<string, OrgState>();
  private readonly jobs = new Map<string, TrainingJob>();
  private readonly corrections = new Set<string>();
  private readonly uploads = new Map<string, { org: string; rows: StagedExample[]; at: number }>();
  private readonly leases = new Map<string, { owner: string; until: number }>();

  private constructor(dir: string) {
    super(dir, 'triage.jsonl');
  }

  static open(dir: string, logger: Logger): EmbeddedTriageStore {
    const store = new EmbeddedTriageStore(dir);
    const records = store.journal.replay((r) => store.apply(r));
    logger.info({ file: store.journal.path, records }, 'organization triage: embedded journal');
    return store;
  }

  private org(orgId: string): OrgState {
    let s = this.orgs.get(orgId);
    if (!s) {
      s = {
        settings: {
          orgId,
          categories: [],
          activeVersion: 0,
          previousVersion: 0,
          autoRetrain: null,
          correctionsSinceRun: 0,
        },
        examples: new Map(),
        versions: [],
      };
      this.orgs.set(orgId, s);
    }
    return s;
  }

  protected apply(r: Record): void {
    switch (r.t) {
      case 'categories':
        this.org(r.org).settings.categories = r.categories;
        break;
      case 'auto':
        this.org(r.org).settings.autoRetrain = r.auto;
        break;
      case 'upload': {
        const { examples } = this.org(r.org);
        if (r.replace)
          for (const [key, e] of examples) if (e.source === 'upload') examples.delete(key);
        for (const row of r.rows)
          examples.set(row.k, { key: row.k, text: row.x, label: row.l, source: 'upload' });
        break;
      }
      case 'correction': {
        const o = this.org(r.org);
        const key = `ticket:${r.ticket}`;
        o.examples.set(key, { key, text: r.x, label: r.l, source: 'correction' });
        o.settings.correctionsSinceRun++;
        this.corrections.add(r.event);
        break;
      }
      case 'job': {
        const j = r.job;
        const job: TrainingJob = {
          ...j,
          createdAt: new Date(j.createdAt),
          startedAt: j.startedAt === null ? null : new Date(j.startedAt),
          finishedAt: j.finishedAt === null ? null : new Date(j.finishedAt),
        };
        if (!this.jobs.has(job.id)) this.org(job.orgId).settings.correctionsSinceRun = 0;
        this.jobs.set(job.id, job);
        break;
      }
      case 'version': {
        const o = this.org(r.org);
        o.versions.unshift({
          orgId: r.org,
          version: r.version,
          jobId: r.job,
          categories: r.categories,
          report: r.report,
          createdAt: new Date(r.at),
        });
        if (r.activate) this.setActive(o, r.version);
        break;
      }
      case 'activate':
        this.setActive(this.org(r.org), r.version);
        break;
    }
  }

  private setActive(o: OrgState, version: number): void {
    if (o.settings.activeVersion === version) return;
    o.settings.previousVersion = o.settings.activeVersion;
    o.settings.activeVersion = version;
  }

  private modelPath(orgId: string, version: number): string {
    return join(this.dir, 'triage-models', encodeURIComponent(orgId), `${version}.json`);
  }

  private saveJob(job: TrainingJob): TrainingJob {
    this.record({
      t: 'job',
      job: {
        ...job,
        createdAt: job.createdAt.getTime(),
        startedAt: job.startedAt?.getTime() ?? null,
        finishedAt: job.finishedAt?.getTime() ?? null,
      },
    });
    return { ...this.jobs.get(job.id)! };
  }

  async settings(orgId: string): Promise<OrgTriageSettings> {
    return { ...this.org(orgId).settings };
  }

  async setCategories(orgId: string, categories: string[]): Promise<void> {
    this.record({ t: 'categories', org: orgId, categories });
  }

  async setAutoRetrain(orgId: string, auto: AutoRetrain | null): Promise<void> {
    this.record({ t: 'auto', org: orgId, auto });
  }

  async stage(orgId: string, uploadId: string, rows: StagedExample[], now: Date): Promise<number> {
    let upload = this.uploads.get(uploadId);
    if (upload && upload.org !== orgId)
      throw new TriageStoreConflict('the upload belongs to another organization');
    if (!upload) this.uploads.set(uploadId, (upload = { org: orgId, rows: [], at: 0 }));
    upload.rows.push(...rows);
    upload.at = now.getTime();
    return upload.rows.length;
  }

  async staged(orgId: string, uploadId: string): Promise<StagedExample[]> {
    const upload = this.uploads.get(uploadId);
    return upload?.org === orgId ? [...upload.rows] : [];
  }

  async commitUpload(orgId: string, uploadId: string, replace: boolean): Promise<CommitResult> {
    const upload = this.uploads.get(uploadId);
    const rows = upload?.org === orgId ? upload.rows : [];
    const last = new Map<string, StagedExample>();
    for (const r of rows) {
      last.delete(r.key);
      last.set(r.key, r);
    }
    const { examples } = this.org(orgId);
    let updated = 0;
    for (const key of last.keys()) {
      const held = examples.get(key);
      if (held && !(replace && held.source === 'upload')) updated++;
    }
    this.record({
      t: 'upload',
      org: orgId,
      replace,
      rows: [...last.values()].map((r) => ({ k: r.key, x: r.text, l: r.label })),
    });
    this.uploads.delete(uploadId);
    return { added: last.size - updated, updated };
  }

  async discardUpload(orgId: string, uploadId: string): Promise<void> {
    if (this.uploads.get(uploadId)?.org === orgId) this.uploads.delete(uploadId);
  }

  async purgeUploads(before: Date): Promise<number> {
    let purged = 0;
    for (const [id, u] of this.uploads)
      if (u.at < before.getTime()) {
        this.uploads.delete(id);
        purged++;
      }
    return purged;
  }

  async recordCorrection(
    orgId: string,
    ticketId: number,
    text: string,
    label: string,
    eventId: string,
  ): Promise<boolean> {
    if (this.corrections.has(eventId)) return false;
    this.record({
      t: 'correction',
      org: orgId,
      event: eventId,
      ticket: ticketId,
      x: text,
      l: label,
    });
    return true;
  }

  async exampleCounts(orgId: string): Promise<ExampleCount[]> {
    const counts = new Map<string, ExampleCount>();
    for (const e of this.org(orgId).examples.values()) {
      const id = `${e.source}\n${e.label}`;
      const c = counts.get(id) ?? { label: e.label, source: e.source, count: 0 };
      c.count++;
      counts.set(id, c);
    }
    return [...counts.values()];
  }

  async examples(orgId: string): Promise<TrainingExample[]> {
    return [...this.org(orgId).examples.values()].sort((a, b) => (a.key < b.key ? -1 : 1));
  }

  async createJob(j: {
    id: string;
    orgId: string;
    trigger: TrainingJob['trigger'];
    activate: boolean;
    now: Date;
  }): Promise<TrainingJob> {
    const busy = [...this.jobs.values()].find(
      (job) => job.orgId === j.orgId && (job.state === 'queued' || job.state === 'running'),
    );
    if (busy) throw new TriageStoreConflict(`training run ${busy.id} is already queued or running`);
    return this.saveJob({
      id: j.id,
      orgId: j.orgId,
      state: 'queued',
      trigger: j.trigger,
      activate: j.activate,
      phase: 'queued',
      progress: 0,
      createdAt: j.now,
      startedAt: null,
      finishedAt: null,
      error: null,
      version: null,
      report: null,
      activated: false,
      attempts: 0,
    });
  }

  async claimJob(owner: string, leaseMs: number, now: Date): Promise<TrainingJob | undefined> {
    const waiting = [...this.jobs.values()]
      .filter(
        (j) =>
          j.state === 'queued' ||
          (j.state === 'running' && (this.leases.get(j.id)?.until ?? 0) < now.getTime()),
      )
      .sort((a, b) => a.createdAt.getTime() - b.createdAt.getTime())[0];
    if (!waiting) return undefined;
    if (waiting.attempts >= 3) {
      this.saveJob({
        ...waiting,
        state: 'failed',
        phase: 'failed',
        finishedAt: now,
        error: 'the run stopped 3 times without finishing (its process died)',
      });
      return undefined;
    }
    this.leases.set(waiting.id, { owner, until: now.getTime() + leaseMs });
    return this.saveJob({
      ...waiting,
      state: 'running',
      phase: 'starting',
      progress: 0,
      attempts: waiting.attempts + 1,
      startedAt: now,
    });
  }

  async heartbeat(
    jobId: string,
    owner: string,
    phase: string,
    progress: number,
    leaseMs: number,
    now: Date,
  ): Promise<boolean> {
    const job = this.jobs.get(jobId);
    const lease = this.leases.get(jobId);
    if (!job || job.state !== 'running' || lease?.owner !== owner) return false;
    // Progress is not journaled: it matters only while the run goes on.
    job.phase = phase.slice(0, 100);
    job.progress = progress;
    lease.until = now.getTime() + leaseMs;
    return true;
  }

  async finishJob(
    jobId: string,
    owner: string,
    outcome: JobOutcome,
    now: Date,
  ): Promise<TrainingJob | undefined> {
    const job = this.jobs.get(jobId);
    if (!job || job.state !== 'running' || this.leases.get(jobId)?.owner !== owner)
      return undefined;
    this.leases.delete(jobId);
    if (outcome.kind === 'failed')
      return this.saveJob({
        ...job,
        state: 'failed',
        phase: 'failed',
        finishedAt: now,
        error: outcome.error.slice(0, 2000),
      });
    const o = this.org(job.orgId);
    const version = (o.versions[0]?.version ?? 0) + 1;
    const path = this.modelPath(job.orgId, version);
    mkdirSync(join(path, '..'), { recursive: true });
    writeFileAtomic(path, outcome.model, { syncDirectory: true });
    this.record({
      t: 'version',
      org: job.orgId,
      version,
      job: jobId,
      categories: outcome.categories,
      report: outcome.report,
      at: now.getTime(),
      activate: job.activate,
    });
    return this.saveJob({
      ...job,
      state: 'succeeded',
      phase: 'done',
      progress: 1,
      finishedAt: now,
      version,
      report: outcome.report,
      activated: job.activate,
    });
  }

  async job(orgId: string, jobId: string): Promise<TrainingJob | undefined> {
    const job = this.jobs.get(jobId);
    return job?.orgId === orgId ? { ...job } : undefined;
  }

  async latestJob(orgId: string): Promise<TrainingJob | undefined> {
    let latest: TrainingJob | undefined;
    for (const j of this.jobs.values())
      if (j.orgId === orgId && (!latest || j.createdAt >= latest.createdAt)) latest = j;
    return latest && { ...latest };
  }

  async versions(orgId: string): Promise<ModelVersion[]> {
    return [...this.org(orgId).versions];
  }

  async model(orgId: string, version: number): Promise<string | undefined> {
    if (!this.org(orgId).versions.some((v) => v.version === version)) return undefined;
    const path = this.modelPath(orgId, version);
    return existsSync(path) ? readFileSync(path, 'utf8') : undefined;
  }

  async activate(orgId: string, version: number): Promise<boolean> {
    const o = this.org(orgId);
    if (version !== 0 && !o.versions.some((v) => v.version === version)) return false;
    if (o.settings.activeVersion !== version) this.record({ t: 'activate', org: orgId, version });
    return true;
  }

  async activeVersions(): Promise<Map<string, number>> {
    const active = new Map<string, number>();
    for (const [org, o] of this.orgs)
      if (o.settings.activeVersion > 0) active.set(org, o.settings.activeVersion);
    return active;
  }
}
