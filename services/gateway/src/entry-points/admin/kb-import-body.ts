import { AppError, invalidRequest, TimeSlicer } from '@support-agent/shared';
import { isUtf8 } from 'node:buffer';
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
  const parts = (Array.isArray(body) ? (body as string[]) : [body]).filter(
    (p): p is string => typeof p === 'string',
  );
  if (parts.length > 0) parts[0] = parts[0]!.replace(/^\uFEFF/, '');
  if (!parts.some((p) => /\S/.test(p)))
    throw invalidRequest('request body is empty: send at least one entry');
  // JSON lines are split piece by piece: the 10 MiB text is never joined into one string.
  const rows =
    format === 'json' ? await arrayRows(parts.join(''), slicer) : await lineRows(parts, slicer);
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

async function lineRows(parts: string[], slicer: TimeSlicer): Promise<KbImportRow[]> {
  const rows: KbImportRow[] = [];
  let line = 0;
  const add = (raw: string) => {
    line++;
    if (!raw.trim()) return;
    try {
      rows.push({ line, value: JSON.parse(raw) as unknown });
    } catch {
      rows.push({ line, error: 'not valid JSON' });
    }
  };
  let open: string[] = []; // the pieces of the line not ended yet (a long line spans pieces)
  for (const part of parts) {
    await slicer.next();
    if (!part.includes('\n')) {
      open.push(part);
      continue;
    }
    const lines = part.split('\n');
    open.push(lines[0]!);
    lines[0] = open.join('');
    open = [lines.pop()!];
    for (const raw of lines) {
      await slicer.next();
      add(raw);
    }
  }
  add(open.join(''));
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
    const parts: string[] = [];
    let cut: Buffer = Buffer.alloc(0); // a character's first bytes, at the end of the last chunk
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
      const bytes = chunk ? (cut.length > 0 ? Buffer.concat([cut, chunk]) : chunk) : cut;
      const end = chunk ? completeUtf8(bytes) : bytes.length;
      const whole = bytes.subarray(0, end);
      cut = bytes.subarray(end);
      if (isUtf8(whole)) parts.push(whole.toString('utf8'));
      else finish(new AppError('invalid_request', 'request body must be UTF-8 encoded JSON'));
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

/** Bytes up to the end of the last whole UTF-8 character (a character cut at the end waits). */
function completeUtf8(bytes: Buffer): number {
  for (let k = 1; k <= Math.min(3, bytes.length); k++) {
    const c = bytes[bytes.length - k]!;
    if ((c & 0xc0) === 0x80) continue; // a continuation byte
    const length = c >= 0xf0 ? 4 : c >= 0xe0 ? 3 : c >= 0xc0 ? 2 : 1;
    return length > k ? bytes.length - k : bytes.length;
  }
  return bytes.length; // not UTF-8 anyway: isUtf8 says so
}

const INFLATE: Record<string, () => Transform> = {
  gzip: createGunzip,
  'x-gzip': createGunzip,
  deflate: createInflate,
  br: createBrotliDecompress,
};
