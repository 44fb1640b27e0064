// Admin API: each organization's own triage (docs/triage.md). Uploads are read as a stream,
// row by row, and staged in the answers service in batches; they join the training set only
// when the whole body was read and every row was accepted.
import { randomUUID } from 'node:crypto';
import { createInterface } from 'node:readline';
import { Readable } from 'node:stream';
import { AppError, invalidRequest } from '@support-agent/shared';
import { CsvError, parse as parseCsv } from 'csv-parse';
import type { Request, RequestHandler, Router } from 'express';
import type { OrgAdmin } from '../../domain/orgs.js';
import type { TriageUpstream } from '../../domain/ports.js';
import {
  modelVersionJson,
  parseModelVersion,
  parseTriageRow,
  readFlag,
  trainingJobJson,
  triageStatusJson,
  TRIAGE_UPLOAD_BATCH,
  type TriageUploadRow,
} from '../../domain/triage-examples.js';
import { methodNotAllowed } from '../http/errors.js';
import { jsonBody } from '../http/json-body.js';

/** Largest upload body: 10,000 tickets of GitHub-issue size fit many times over. */
export const TRIAGE_UPLOAD_LIMIT = 256 * 1024 * 1024;

type UploadFormat = 'jsonl' | 'csv';
const FORMATS: Record<string, UploadFormat> = {
  'application/x-ndjson': 'jsonl',
  'application/jsonl': 'jsonl',
  'application/x-jsonlines': 'jsonl',
  'text/plain': 'jsonl',
  'text/csv': 'csv',
};

export interface TriageRouteDeps {
  auth: RequestHandler;
  orgs: OrgAdmin;
  triage: TriageUpstream;
  bodyLimit: number;
}

/** The routes under /orgs/{org}/triage (mounted by adminRouter). */
export function triageRoutes(router: Router, deps: TriageRouteDeps): void {
  const { auth, orgs, triage } = deps;
  const body = jsonBody(deps.bodyLimit);
  const org = async (req: Request) => (await orgs.requireOrg(String(req.params.org))).id;

  router
    .route('/orgs/:org/triage')
    .get(auth, async (req, res) => {
      res.json(
        triageStatusJson(await triage.getTriageStatus({ orgId: await org(req) }, String(req.id))),
      );
    })
    .all(methodNotAllowed(['GET', 'HEAD']));

  router
    .route('/orgs/:org/triage/categories')
    .put(auth, ...body, async (req, res) => {
      const categories = (req.body as Record<string, unknown>).categories;
      if (!Array.isArray(categories) || !categories.every((c) => typeof c === 'string'))
        throw invalidRequest('categories must be an array of 2 to 50 names', 'categories');
      const status = await triage.setTriageCategories(
        { orgId: await org(req), categories },
        String(req.id),
      );
      res.json(triageStatusJson(status));
    })
    .all(methodNotAllowed(['PUT']));

  router
    .route('/orgs/:org/triage/examples')
    .post(auth, uploadExamples(deps))
    .all(methodNotAllowed(['POST']));

  router
    .route('/orgs/:org/triage/training')
    .post(auth, ...jsonBody(deps.bodyLimit, { allowEmpty: true }), async (req, res) => {
      const activate = readFlag((req.body as Record<string, unknown>).activate, 'activate');
      const job = await triage.startTriageTraining(
        { orgId: await org(req), activate: activate ?? false },
        String(req.id),
      );
      res.status(202).json(trainingJobJson(job));
    })
    .all(methodNotAllowed(['POST']));

  router
    .route('/orgs/:org/triage/training/:job')
    .get(auth, async (req, res) => {
      const job = await triage.getTriageTrainingJob(
        { orgId: await org(req), jobId: String(req.params.job) },
        String(req.id),
      );
      res.json(trainingJobJson(job));
    })
    .all(methodNotAllowed(['GET', 'HEAD']));

  router
    .route('/orgs/:org/triage/versions')
    .get(auth, async (req, res) => {
      const list = await triage.listTriageModelVersions({ orgId: await org(req) }, String(req.id));
      res.json({
        active_version: list.activeVersion === 0 ? 'builtin' : list.activeVersion,
        versions: list.versions.map(modelVersionJson),
      });
    })
    .all(methodNotAllowed(['GET', 'HEAD']));

  router
    .route('/orgs/:org/triage/versions/:version/activate')
    .post(auth, async (req, res) => {
      const version = parseModelVersion(String(req.params.version));
      const status = await triage.activateTriageModelVersion(
        { orgId: await org(req), version },
        String(req.id),
      );
      res.json(triageStatusJson(status));
    })
    .all(methodNotAllowed(['POST']));

  router
    .route('/orgs/:org/triage/versions/:version/model')
    .get(auth, async (req, res) => {
      const version = parseModelVersion(String(req.params.version));
      if (version === 0)
        throw new AppError('not_found', 'the built-in model ships with the service');
      const { modelJson } = await triage.getTriageModel(
        { orgId: await org(req), version },
        String(req.id),
      );
      res.type('application/json').send(modelJson);
    })
    .all(methodNotAllowed(['GET', 'HEAD']));

  router
    .route('/orgs/:org/triage/rollback')
    .post(auth, async (req, res) => {
      res.json(
        triageStatusJson(
          await triage.rollbackTriageModel({ orgId: await org(req) }, String(req.id)),
        ),
      );
    })
    .all(methodNotAllowed(['POST']));

  router
    .route('/orgs/:org/triage/auto-retrain')
    .put(auth, ...body, async (req, res) => {
      const b = req.body as Record<string, unknown>;
      const after = b.after_corrections;
      if (!Number.isInteger(after) || (after as number) < 0)
        throw invalidRequest(
          'after_corrections must be a non-negative integer (0 turns automatic runs off)',
          'after_corrections',
        );
      const status = await triage.setTriageAutoRetrain(
        {
          orgId: await org(req),
          afterCorrections: after as number,
          activate: readFlag(b.activate, 'activate') ?? false,
        },
        String(req.id),
      );
      res.json(triageStatusJson(status));
    })
    .all(methodNotAllowed(['PUT']));
}

/**
 * POST …/triage/examples: JSON lines (application/x-ndjson, application/jsonl, text/plain) or
 * CSV with a header row (text/csv), read as a stream. Each row is checked as it arrives and
 * staged in batches; the first bad row refuses the whole upload (400 naming the line), and an
 * upload cut short changes nothing. `?replace=true` replaces the examples uploaded before.
 */
function uploadExamples({ orgs, triage }: TriageRouteDeps): RequestHandler {
  return async (req, res) => {
    const type = (req.headers['content-type'] ?? '').split(';')[0]!.trim().toLowerCase();
    const format = FORMATS[type];
    if (!format)
      throw new AppError(
        'invalid_request',
        'Content-Type must be application/x-ndjson (one JSON object per line) or text/csv (a header row naming text or title and body, and label)',
        { param: 'Content-Type' },
      );
    const replace = readFlag(req.query.replace, 'replace') ?? false;
    const orgId = (await orgs.requireOrg(String(req.params.org))).id;
    const uploadId = `upl_${randomUUID().replace(/-/g, '')}`;
    const requestId = String(req.id);
    let batch: TriageUploadRow[] = [];
    const flush = async () => {
      if (batch.length === 0) return;
      const examples = batch;
      batch = [];
      await triage.stageTriageExamples({ orgId, uploadId, examples }, requestId);
    };
    try {
      for await (const row of readRows(limited(req, TRIAGE_UPLOAD_LIMIT), format)) {
        batch.push(row);
        if (batch.length >= TRIAGE_UPLOAD_BATCH) await flush();
      }
      await flush();
      if (!req.complete) throw invalidRequest('the upload was cut short: nothing was added');
      const result = await triage.commitTriageUpload({ orgId, uploadId, replace }, requestId);
      res.json({
        added: result.added,
        updated: result.updated,
        triage: result.status ? triageStatusJson(result.status) : null,
      });
    } catch (err) {
      // The answers service forgets a refused upload itself; this covers errors found here.
      await triage.discardTriageUpload({ orgId, uploadId }, requestId).catch(() => undefined);
      throw err;
    }
  };
}

/** The body as a stream of at most `limit` bytes (413 beyond). */
function limited(req: Request, limit: number): Readable {
  let bytes = 0;
  return Readable.from(
    (async function* () {
      for await (const chunk of req as AsyncIterable<Buffer>) {
        bytes += chunk.length;
        if (bytes > limit)
          throw new AppError('payload_too_large', `an upload may hold at most ${limit} bytes`);
        yield chunk;
      }
    })(),
  );
}

async function* readRows(input: Readable, format: UploadFormat): AsyncGenerator<TriageUploadRow> {
  if (format === 'csv') {
    yield* csvRows(input);
    return;
  }
  let line = 0;
  for await (const raw of createInterface({ input, crlfDelay: Infinity })) {
    line++;
    const text = line === 1 ? raw.replace(/^\uFEFF/, '') : raw;
    if (!text.trim()) continue;
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch {
      throw invalidRequest(`line ${line}: not valid JSON`, 'examples');
    }
    yield parseTriageRow(line, value);
  }
}

/** CSV records with a header row; each record becomes the object its header names. */
async function* csvRows(input: Readable): AsyncGenerator<TriageUploadRow> {
  const parser = input.pipe(
    parseCsv({ bom: true, relax_column_count: true, skip_empty_lines: true, info: true }),
  );
  let header: string[] | undefined;
  try {
    for await (const { record, info } of parser as AsyncIterable<{
      record: string[];
      info: { lines: number };
    }>) {
      if (!header) {
        header = record.map((h) => h.trim().toLowerCase());
        if (!header.includes('label') && !header.includes('category'))
          throw invalidRequest(
            `line 1: the CSV header must name a label (or category) column and text (or title and body); found: ${header.join(', ')}`,
            'examples',
          );
        continue;
      }
      if (record.every((cell) => !cell.trim())) continue;
      yield parseTriageRow(
        info.lines,
        Object.fromEntries(header.map((name, i) => [name, record[i] ?? ''])),
      );
    }
  } catch (err) {
    if (err instanceof CsvError)
      throw invalidRequest(`the file is not valid CSV: ${err.message}`, 'examples');
    throw err;
  }
}
