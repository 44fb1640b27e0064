import type { PoolConnection, RowDataPacket } from 'mysql2/promise';
import { openMysql, withTransaction, type Logger, type Pool } from '@support-agent/shared';
import {
  TriageStoreConflict,
  type AutoRetrain,
  type CommitResult,
  type ExampleCount,
  type JobOutcome,
  type ExampleSource,
  type JobState,
  type JobTrigger,
  type ModelVersion,
  type OrgTriageSettings,
  type StagedExample,
  type TrainingExample,
  type TrainingJob,
  type TriageStore,
} from '../domain/org-triage/ports.js';
import { SCHEMA } from './migrations.js';

/** Rows per INSERT of a batch. */
const INSERT_CHUNK = 200;
/** Jobs taken up again after their replica died before they count as failed. */
const MAX_ATTEMPTS = 3;

const JOB_COLUMNS =
  'id, org_id, state, trigger_kind, activate, phase, progress, attempts, created_at, started_at, finished_at, error, version, report, activated';

/**
 * Each organization's own triage in MySQL 8 / MariaDB (answers_triage_*): settings, the
 * training set, staged uploads, training jobs with leases (any replica may run a job; one that
 * dies leaves it to another), and model versions. A job's end, its new version and the
 * activation are one transaction, so a failed run never touches the active model.
 */
export class MysqlTriageStore implements TriageStore {
  private constructor(private readonly pool: Pool) {}

  static async open(
    url: string,
    logger: Logger,
    options: { poolSize?: number } = {},
  ): Promise<MysqlTriageStore> {
    return new MysqlTriageStore(
      await openMysql(url, logger, { schema: SCHEMA, poolSize: options.poolSize ?? 4 }),
    );
  }

  private transaction<T>(fn: (conn: PoolConnection) => Promise<T>): Promise<T> {
    return withTransaction(this.pool, fn, {
      isolation: 'READ COMMITTED',
      attempts: 8,
      retryDuplicates: true,
    });
  }

  async settings(orgId: string): Promise<OrgTriageSettings> {
    const [rows] = await this.pool.query<RowDataPacket[]>(
      'SELECT * FROM answers_triage_settings WHERE org_id = ?',
      [orgId],
    );
    return settingsOf(orgId, rows[0]);
  }

  async setCategories(orgId: string, categories: string[], now: Date): Promise<void> {
    await this.transaction(async (conn) => {
      await lockSettings(conn, orgId, now);
      await conn.query(
        'UPDATE answers_triage_settings SET categories = ?, updated_at = ? WHERE org_id = ?',
        [JSON.stringify(categories), now, orgId],
      );
    });
  }

  async setAutoRetrain(orgId: string, auto: AutoRetrain | null, now: Date): Promise<void> {
    await this.transaction(async (conn) => {
      await lockSettings(conn, orgId, now);
      await conn.query(
        'UPDATE answers_triage_settings SET auto_after_corrections = ?, auto_activate = ?, updated_at = ? WHERE org_id = ?',
        [auto?.afterCorrections ?? null, auto?.activate ? 1 : 0, now, orgId],
      );
    });
  }

  async stage(orgId: string, uploadId: string, rows: StagedExample[], now: Date): Promise<number> {
    return this.transaction(async (conn) => {
      const [owner] = await conn.query<RowDataPacket[]>(
        'SELECT org_id, COALESCE(MAX(seq), 0) AS last FROM answers_triage_staged WHERE upload_id = ? GROUP BY org_id FOR UPDATE',
        [uploadId],
      );
      if (owner[0] && owner[0].org_id !== orgId)
        throw new TriageStoreConflict('the upload belongs to another organization');
      let seq = owner[0] ? Number(owner[0].last) : 0;
      for (let i = 0; i < rows.length; i += INSERT_CHUNK) {
        const chunk = rows.slice(i, i + INSERT_CHUNK);
        await conn.query(
          'INSERT INTO answers_triage_staged (upload_id, seq, org_id, line, example_key, text, label, staged_at) VALUES ?',
          [chunk.map((r) => [uploadId, ++seq, orgId, r.line, r.key, r.text, r.label, now])],
        );
      }
      return seq;
    });
  }

  async staged(orgId: string, uploadId: string): Promise<StagedExample[]> {
    const [rows] = await this.pool.query<RowDataPacket[]>(
      'SELECT line, example_key, text, label FROM answers_triage_staged WHERE upload_id = ? AND org_id = ? ORDER BY seq',
      [uploadId, orgId],
    );
    return rows.map((r) => ({
      line: Number(r.line),
      key: String(r.example_key),
      text: String(r.text),
      label: String(r.label),
    }));
  }

  async commitUpload(
    orgId: string,
    uploadId: string,
    replace: boolean,
    now: Date,
  ): Promise<CommitResult> {
    return this.transaction(async (conn) => {
      await lockSettings(conn, orgId, now);
      if (replace)
        await conn.query(
          "DELETE FROM answers_triage_examples WHERE org_id = ? AND source = 'upload'",
          [orgId],
        );
      // The last row staged for a key wins (a key repeated within the upload is one example).
      const [[counts]] = await conn.query<RowDataPacket[]>(
        `SELECT COUNT(*) AS total,
                SUM(EXISTS (SELECT 1 FROM answers_triage_examples e
                             WHERE e.org_id = s.org_id AND e.example_key = s.example_key)) AS existing
           FROM (SELECT org_id, example_key FROM answers_triage_staged
                  WHERE upload_id = ? AND org_id = ? GROUP BY org_id, example_key) s`,
        [uploadId, orgId],
      );
      await conn.query(
        `INSERT INTO answers_triage_examples (org_id, example_key, text, label, source, updated_at)
         SELECT s.org_id, s.example_key, s.text, s.label, 'upload', ?
           FROM answers_triage_staged s
           JOIN (SELECT example_key, MAX(seq) AS seq FROM answers_triage_staged
                  WHERE upload_id = ? AND org_id = ? GROUP BY example_key) last
             ON last.seq = s.seq
          WHERE s.upload_id = ?
         ON DUPLICATE KEY UPDATE text = VALUES(text), label = VALUES(label),
                                 source = VALUES(source), updated_at = VALUES(updated_at)`,
        [now, uploadId, orgId, uploadId],
      );
      await conn.query('DELETE FROM answers_triage_staged WHERE upload_id = ?', [uploadId]);
      const total = Number(counts?.total ?? 0);
      const existing = Number(counts?.existing ?? 0);
      return { added: total - existing, updated: existing };
    });
  }

  async discardUpload(orgId: string, uploadId: string): Promise<void> {
    await this.pool.query('DELETE FROM answers_triage_staged WHERE upload_id = ? AND org_id = ?', [
      uploadId,
      orgId,
    ]);
  }

  async purgeUploads(before: Date): Promise<number> {
    const [stale] = await this.pool.query<RowDataPacket[]>(
      'SELECT upload_id FROM answers_triage_staged GROUP BY upload_id HAVING MAX(staged_at) < ?',
      [before],
    );
    for (const r of stale)
      await this.pool.query('DELETE FROM answers_triage_staged WHERE upload_id = ?', [r.upload_id]);
    return stale.length;
  }

  async recordCorrection(
    orgId: string,
    ticketId: number,
    text: string,
    label: string,
    eventId: string,
    now: Date,
  ): Promise<boolean> {
    return this.transaction(async (conn) => {
      const [seen] = await conn.query<RowDataPacket[]>(
        'SELECT 1 FROM answers_triage_correction_events WHERE event_id = ? FOR UPDATE',
        [eventId],
      );
      if (seen.length > 0) return false;
      await lockSettings(conn, orgId, now);
      await conn.query(
        'INSERT INTO answers_triage_correction_events (event_id, org_id, created_at) VALUES (?, ?, ?)',
        [eventId, orgId, now],
      );
      await conn.query(
        `INSERT INTO answers_triage_examples (org_id, example_key, text, label, source, updated_at)
         VALUES (?, ?, ?, ?, 'correction', ?)
         ON DUPLICATE KEY UPDATE text = VALUES(text), label = VALUES(label), source = VALUES(source),
                                 updated_at = VALUES(updated_at)`,
        [orgId, `ticket:${ticketId}`, text, label, now],
      );
      await conn.query(
        'UPDATE answers_triage_settings SET corrections_since_run = corrections_since_run + 1 WHERE org_id = ?',
        [orgId],
      );
      return true;
    });
  }

  async exampleCounts(orgId: string): Promise<ExampleCount[]> {
    const [rows] = await this.pool.query<RowDataPacket[]>(
      'SELECT label, source, COUNT(*) AS n FROM answers_triage_examples WHERE org_id = ? GROUP BY label, source',
      [orgId],
    );
    return rows.map((r) => ({
      label: String(r.label),
      source: r.source as ExampleSource,
      count: Number(r.n),
    }));
  }

  async examples(orgId: string): Promise<TrainingExample[]> {
    const [rows] = await this.pool.query<RowDataPacket[]>(
      'SELECT example_key, text, label, source FROM answers_triage_examples WHERE org_id = ? ORDER BY example_key',
      [orgId],
    );
    return rows.map((r) => ({
      key: String(r.example_key),
      text: String(r.text),
      label: String(r.label),
      source: r.source as ExampleSource,
    }));
  }

  async createJob(job: {
    id: string;
    orgId: string;
    trigger: JobTrigger;
    activate: boolean;
    now: Date;
  }): Promise<TrainingJob> {
    return this.transaction(async (conn) => {
      await lockSettings(conn, job.orgId, job.now);
      const [busy] = await conn.query<RowDataPacket[]>(
        "SELECT id FROM answers_triage_jobs WHERE org_id = ? AND state IN ('queued', 'running') LIMIT 1",
        [job.orgId],
      );
      if (busy[0])
        throw new TriageStoreConflict(`training run ${busy[0].id} is already queued or running`);
      await conn.query(
        `INSERT INTO answers_triage_jobs (id, org_id, state, trigger_kind, activate, phase, progress, created_at)
         VALUES (?, ?, 'queued', ?, ?, 'queued', 0, ?)`,
        [job.id, job.orgId, job.trigger, job.activate ? 1 : 0, job.now],
      );
      await conn.query(
        'UPDATE answers_triage_settings SET corrections_since_run = 0 WHERE org_id = ?',
        [job.orgId],
      );
      return (await jobById(conn, job.id))!;
    });
  }

  async claimJob(owner: string, leaseMs: number, now: Date): Promise<TrainingJob | undefined> {
    return this.transaction(async (conn) => {
      const [rows] = await conn.query<RowDataPacket[]>(
        `SELECT id, attempts FROM answers_triage_jobs
          WHERE state = 'queued' OR (state = 'running' AND lease_expires_at < ?)
          ORDER BY created_at LIMIT 1 FOR UPDATE SKIP LOCKED`,
        [now],
      );
      const row = rows[0];
      if (!row) return undefined;
      if (Number(row.attempts) >= MAX_ATTEMPTS) {
        await conn.query(
          "UPDATE answers_triage_jobs SET state = 'failed', phase = 'failed', finished_at = ?, error = ?, lease_owner = NULL WHERE id = ?",
          [
            now,
            `the run stopped ${MAX_ATTEMPTS} times without finishing (its process died)`,
            row.id,
          ],
        );
        return undefined;
      }
      await conn.query(
        `UPDATE answers_triage_jobs SET state = 'running', phase = 'starting', progress = 0, attempts = attempts + 1,
                lease_owner = ?, lease_expires_at = ?, started_at = ? WHERE id = ?`,
        [owner, new Date(now.getTime() + leaseMs), now, row.id],
      );
      return jobById(conn, String(row.id));
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
    const [res] = await this.pool.query<RowDataPacket[] & { affectedRows?: number }>(
      `UPDATE answers_triage_jobs SET phase = ?, progress = ?, lease_expires_at = ?
        WHERE id = ? AND lease_owner = ? AND state = 'running'`,
      [phase.slice(0, 100), progress, new Date(now.getTime() + leaseMs), jobId, owner],
    );
    return ((res as unknown as { affectedRows: number }).affectedRows ?? 0) > 0;
  }

  async finishJob(
    jobId: string,
    owner: string,
    outcome: JobOutcome,
    now: Date,
  ): Promise<TrainingJob | undefined> {
    return this.transaction(async (conn) => {
      const [rows] = await conn.query<RowDataPacket[]>(
        "SELECT org_id, activate FROM answers_triage_jobs WHERE id = ? AND lease_owner = ? AND state = 'running' FOR UPDATE",
        [jobId, owner],
      );
      const job = rows[0];
      if (!job) return undefined;
      const orgId = String(job.org_id);
      if (outcome.kind === 'failed') {
        await conn.query(
          "UPDATE answers_triage_jobs SET state = 'failed', phase = 'failed', finished_at = ?, error = ?, lease_owner = NULL WHERE id = ?",
          [now, outcome.error.slice(0, 2000), jobId],
        );
        return jobById(conn, jobId);
      }
      const settings = await lockSettings(conn, orgId, now);
      const [[last]] = await conn.query<RowDataPacket[]>(
        'SELECT COALESCE(MAX(version), 0) AS v FROM answers_triage_models WHERE org_id = ?',
        [orgId],
      );
      const version = Number(last?.v ?? 0) + 1;
      await conn.query(
        'INSERT INTO answers_triage_models (org_id, version, job_id, categories, report, model, created_at) VALUES (?, ?, ?, ?, ?, ?, ?)',
        [
          orgId,
          version,
          jobId,
          JSON.stringify(outcome.categories),
          JSON.stringify(outcome.report),
          outcome.model,
          now,
        ],
      );
      const activate = Number(job.activate) === 1;
      if (activate)
        await conn.query(
          'UPDATE answers_triage_settings SET previous_version = ?, active_version = ?, updated_at = ? WHERE org_id = ?',
          [settings.activeVersion, version, now, orgId],
        );
      await conn.query(
        `UPDATE answers_triage_jobs SET state = 'succeeded', phase = 'done', progress = 1, finished_at = ?,
                version = ?, report = ?, activated = ?, lease_owner = NULL WHERE id = ?`,
        [now, version, JSON.stringify(outcome.report), activate ? 1 : 0, jobId],
      );
      return jobById(conn, jobId);
    });
  }

  async job(orgId: string, jobId: string): Promise<TrainingJob | undefined> {
    const job = await jobById(this.pool, jobId);
    return job?.orgId === orgId ? job : undefined;
  }

  async latestJob(orgId: string): Promise<TrainingJob | undefined> {
    const [rows] = await this.pool.query<RowDataPacket[]>(
      `SELECT ${JOB_COLUMNS} FROM answers_triage_jobs WHERE org_id = ? ORDER BY created_at DESC, id DESC LIMIT 1`,
      [orgId],
    );
    return rows[0] ? jobOf(rows[0]) : undefined;
  }

  async versions(orgId: string): Promise<ModelVersion[]> {
    const [rows] = await this.pool.query<RowDataPacket[]>(
      'SELECT version, job_id, categories, report, created_at FROM answers_triage_models WHERE org_id = ? ORDER BY version DESC',
      [orgId],
    );
    return rows.map((r) => ({
      orgId,
      version: Number(r.version),
      jobId: String(r.job_id),
      categories: JSON.parse(String(r.categories)) as string[],
      report: JSON.parse(String(r.report)) as ModelVersion['report'],
      createdAt: new Date(r.created_at as Date),
    }));
  }

  async model(orgId: string, version: number): Promise<string | undefined> {
    const [rows] = await this.pool.query<RowDataPacket[]>(
      'SELECT model FROM answers_triage_models WHERE org_id = ? AND version = ?',
      [orgId, version],
    );
    return rows[0] ? String(rows[0].model) : undefined;
  }

  async activate(orgId: string, version: number, now: Date): Promise<boolean> {
    return this.transaction(async (conn) => {
      const settings = await lockSettings(conn, orgId, now);
      if (version !== 0) {
        const [rows] = await conn.query<RowDataPacket[]>(
          'SELECT 1 FROM answers_triage_models WHERE org_id = ? AND version = ?',
          [orgId, version],
        );
        if (rows.length === 0) return false;
      }
      if (version === settings.activeVersion) return true;
      await conn.query(
        'UPDATE answers_triage_settings SET previous_version = ?, active_version = ?, updated_at = ? WHERE org_id = ?',
        [settings.activeVersion, version, now, orgId],
      );
      return true;
    });
  }

  async activeVersions(): Promise<Map<string, number>> {
    const [rows] = await this.pool.query<RowDataPacket[]>(
      'SELECT org_id, active_version FROM answers_triage_settings WHERE active_version > 0',
    );
    return new Map(rows.map((r) => [String(r.org_id), Number(r.active_version)]));
  }

  async close(): Promise<void> {
    await this.pool.end();
  }
}

/** Makes sure the organization's settings row exists and locks it. */
async function lockSettings(
  conn: PoolConnection,
  orgId: string,
  now: Date,
): Promise<OrgTriageSettings> {
  await conn.query(
    `INSERT INTO answers_triage_settings (org_id, categories, updated_at) VALUES (?, '[]', ?)
     ON DUPLICATE KEY UPDATE org_id = org_id`,
    [orgId, now],
  );
  const [rows] = await conn.query<RowDataPacket[]>(
    'SELECT * FROM answers_triage_settings WHERE org_id = ? FOR UPDATE',
    [orgId],
  );
  return settingsOf(orgId, rows[0]);
}

function settingsOf(orgId: string, r: RowDataPacket | undefined): OrgTriageSettings {
  return {
    orgId,
    categories: r ? (JSON.parse(String(r.categories)) as string[]) : [],
    activeVersion: r ? Number(r.active_version) : 0,
    previousVersion: r ? Number(r.previous_version) : 0,
    autoRetrain:
      r && r.auto_after_corrections !== null
        ? {
            afterCorrections: Number(r.auto_after_corrections),
            activate: Number(r.auto_activate) === 1,
          }
        : null,
    correctionsSinceRun: r ? Number(r.corrections_since_run) : 0,
  };
}

async function jobById(
  conn: Pick<PoolConnection, 'query'>,
  id: string,
): Promise<TrainingJob | undefined> {
  const [rows] = await conn.query<RowDataPacket[]>(
    `SELECT ${JOB_COLUMNS} FROM answers_triage_jobs WHERE id = ?`,
    [id],
  );
  return rows[0] ? jobOf(rows[0]) : undefined;
}

const dateOrNull = (v: unknown) => (v === null || v === undefined ? null : new Date(v as Date));

function jobOf(r: RowDataPacket): TrainingJob {
  return {
    id: String(r.id),
    orgId: String(r.org_id),
    state: r.state as JobState,
    trigger: r.trigger_kind as JobTrigger,
    activate: Number(r.activate) === 1,
    phase: String(r.phase),
    progress: Number(r.progress),
    attempts: Number(r.attempts),
    createdAt: new Date(r.created_at as Date),
    startedAt: dateOrNull(r.started_at),
    finishedAt: dateOrNull(r.finished_at),
    error: r.error === null ? null : String(r.error),
    version: r.version === null ? null : Number(r.version),
    report: r.report === null ? null : (JSON.parse(String(r.report)) as TrainingJob['report']),
    activated: Number(r.activated) === 1,
  };
}
