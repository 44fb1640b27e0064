import { AppError, invalidRequest, TimeSlicer } from '@support-agent/shared';
import type { Readable, Transform } from 'node:stream';
import { createBrotliDecompress, createGunzip, createInflate } from 'node:zlib';
import type { RequestHandler } from 'express';
import type { KbImportRow } from '../../domain/kb-import.js';
import { rejectLoneSurrogates } from '../../domain/validation.js';
import { NotJsonArray, parseJsonArrayInSlices } from './json-array-elements.js';

export const KB_IMPORT_BODY_LIMIT = 10 * 1024 * 1024;

export type KbImportFormat = 'json' | 'jsonl';

const FORMATS: Record<string, KbImportFormat> = {
  'application/json': 'json',
  'application/x-ndjson': 'jsonl',
  'application/jsonl': 'jsonl',
  'application/x-jsonlines': 'jsonl',
  'text/plain': 'jsonl',
};

/** Set by kbImportBody: the import format Content-Type chose. */
export interface KbImportLocals {
  kbImportFormat?: KbImportFormat;
}

/**
 * Body parsing of `POST …/kb/entries`: a JSON array (application/json) or JSON lines
 * (application/x-ndjson, application/jsonl or text/plain), UTF-8, at most 10 MiB (413 beyond).
 * Leaves the body's text in req.body (as the pieces it arrived in) and the format in
 * res.locals.
 */
export function kbImportBody(limit: number = KB_IMPORT_BODY_LIMIT): RequestHandler[] {
  const chooseFormat: RequestHandler = (req, res, next) => {
    const [mediaType, ...params] = (req.headers['content-type'] ?? '').split(';');
    const type = mediaType!.trim().toLowerCase();
    const format = FORMATS[type];
    if (!format) {
      throw new AppError(
        'invalid_request',
        'Content-Type must be application/json (a JSON array of entries) or application/x-ndjson, application/jsonl or text/plain (one entry per line)',
        { param: 'Content-Type' },
      );
    }
    const charset = params
      .map((p) => /^\s*charset\s*=\s*"?([^";\s]*)"?\s*$/i.exec(p)?.[1]?.toLowerCase())
      .find((c) => c !== undefined);
    if (charset !== undefined && charset !== 'utf-8' && charset !== 'utf8') {
      throw new AppError('invalid_request', 'request body must be UTF-8 encoded', {
        param: 'Content-Type',
      });
    }
    (res.locals as KbImportLocals).kbImportFormat = format;
    next();
  };
  return [chooseFormat, readText(limit)];
}

/**
 * Splits an import body into rows. JSON array: row `line` is the 1-based position. JSON
 * lines: the 1-based line; blank lines are skipped, a line that is not JSON is a failed row.
 * An empty body, malformed or non-array JSON, one without any row, or text with a lone UTF-16
 * surrogate anywhere is a 400. Both formats are parsed in time slices (TimeSlicer), an entry at
 * a time: a 10 MiB import never holds the gateway's event loop for long, so other requests are
 * served meanwhile.
 */
export async function parseKbImportRows(
  body: unknown,
  format: KbImportFormat,
): Promise<KbImportRow[]> {
  const slicer = new TimeSlicer();
  const joined = Array.isArray(body) ? body.join('') : body;
  const text = (typeof joined === 'string' ? joined : '').replace(/^\uFEFF/, '');
  if (!/\S/.test(text)) throw invalidRequest('request body is empty: send at least one entry');
  const rows = format === 'json' ? await arrayRows(text, slicer) : await lineRows(text, slicer);
  if (rows.length === 0) throw invalidRequest('request body holds no entries');
  // Text that cannot be stored as sent refuses the whole import (nothing is written).
  for (const row of rows) {
    await slicer.next();
    if ('value' in row)
      rejectLoneSurrogates(row.value, `${format === 'json' ? 'entry' : 'line'} ${row.line}: `);
  }
  return rows;
}

async function arrayRows(text: string, slicer: TimeSlicer): Promise<KbImportRow[]> {
  let parsed: unknown[];
  try {
    parsed = await parseJsonArrayInSlices(text, slicer);
  } catch (err) {
    if (!(err instanceof NotJsonArray)) throw err;
    if (!isJson(text)) throw invalidRequest('request body is not valid JSON');
    throw invalidRequest(
      'request body must be a JSON array of entries (or JSON lines, with Content-Type application/x-ndjson)',
    );
  }
  return parsed.map((value: unknown, i) => ({ line: i + 1, value }));
}

/** Whether text that is not a JSON array is JSON at all (only for the error message). */
function isJson(text: string): boolean {
  if (!/^\s*[{"\d\-tfn]/.test(text)) return false;
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
}

async function lineRows(text: string, slicer: TimeSlicer): Promise<KbImportRow[]> {
  const rows: KbImportRow[] = [];
  const lines = text.split('\n');
  for (let i = 0; i < lines.length; i++) {
    await slicer.next();
    const raw = lines[i]!;
    if (!raw.trim()) continue;
    try {
      rows.push({ line: i + 1, value: JSON.parse(raw) as unknown });
    } catch {
      rows.push({ line: i + 1, error: 'not valid JSON' });
    }
  }
  return rows;
}

/**
 * Reads the body as UTF-8 text, decoding each chunk as it arrives (Content-Encoding gzip,
 * deflate or br inflated first): no 10 MiB buffer is concatenated and decoded in one go on
 * the event loop. Invalid UTF-8 is a 400, more than `limit` bytes a 413.
 */
function readText(limit: number): RequestHandler {
  const tooLarge = () =>
    new AppError('payload_too_large', `request body exceeds ${limit / (1024 * 1024)} MiB`);
  return (req, _res, next) => {
    const encoding = String(req.headers['content-encoding'] ?? 'identity').toLowerCase();
    const inflate = INFLATE[encoding];
    if (!inflate && encoding !== 'identity') {
      return next(new AppError('invalid_request', 'unsupported Content-Encoding'));
    }
    if (!inflate && Number(req.headers['content-length'] ?? 0) > limit) {
      req.resume();
      return next(tooLarge());
    }
    const source: Readable = inflate ? req.pipe(inflate()) : req;
    const decoder = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });
    const parts: string[] = [];
    let bytes = 0;
    let done = false;
    const finish = (err?: AppError) => {
      if (done) return;
      done = true;
      if (err) {
        source.removeAllListeners('data');
        source.resume(); // the rest is read and dropped
      } else {
        req.body = parts;
      }
      next(err);
    };
    const decode = (chunk?: Buffer) => {
      try {
        parts.push(chunk ? decoder.decode(chunk, { stream: true }) : decoder.decode());
      } catch {
        finish(new AppError('invalid_request', 'request body must be UTF-8 encoded JSON'));
      }
    };
    source.on('data', (chunk: Buffer) => {
      bytes += chunk.length;
      if (bytes > limit) finish(tooLarge());
      else decode(chunk);
    });
    source.on('end', () => {
      decode();
      finish();
    });
    source.on('error', () => finish(new AppError('invalid_request', 'malformed request body')));
  };
}

const INFLATE: Record<string, () => Transform> = {
  gzip: createGunzip,
  'x-gzip': createGunzip,
  deflate: createInflate,
  br: createBrotliDecompress,
};
