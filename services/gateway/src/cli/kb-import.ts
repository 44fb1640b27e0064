// `kb import`: streams a JSONL, JSON-array or CSV file, sends it to the admin API in batches of
// JSON lines and maps the failures the API reports (batch-relative lines) back to the file.
import { createReadStream, type ReadStream } from 'node:fs';
import { open, stat } from 'node:fs/promises';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { pipeline } from 'node:stream';
import cliProgress from 'cli-progress';
import { CsvError, parse as parseCsv } from 'csv-parse';

export const KB_FILE_FORMATS = ['jsonl', 'csv', 'json'] as const;
export type KbFileFormat = (typeof KB_FILE_FORMATS)[number];

/** Kept under the admin API's 10 MiB body limit whatever --batch says. */
const MAX_BATCH_BYTES = 8 * 1024 * 1024;

/** A failure about a row of the source file. */
export interface SourceFailure {
  /** 1-based line of the file where the row starts (CSV: the header is line 1). */
  line: number;
  /** 1-based position in a JSON array. */
  item?: number;
  message: string;
}

/**
 * One row read from the file: the JSON line to send, or why it cannot be sent; `consumed` is
 * how many bytes of the file the rows so far took up (for progress).
 */
type SourceRow = { line: number; item?: number; consumed: number } & (
  { json: string } | { error: string }
);

export interface BatchResult {
  inserted: number;
  updated: number;
  failed: Array<{ line: number; message: string }>;
}

export interface ImportSummary {
  inserted: number;
  updated: number;
  failed: SourceFailure[];
  rows: number;
  batches: number;
}

/** What the user sees while an import runs. */
export interface ImportProgress {
  start(totalBytes: number): void;
  /** After each batch, with the totals so far. */
  batch(info: {
    batch: number;
    firstLine: number;
    lastLine: number;
    rows: number;
    result: BatchResult;
    totals: ImportSummary;
    /** Bytes of the file behind the rows sent so far. */
    bytesDone: number;
  }): void;
  /** `completed`: the whole file went through. */
  stop(completed: boolean): void;
}

export class ImportError extends Error {}

/** --format, else the extension (.jsonl/.ndjson, .csv), else the first character ('[' or '{'). */
export async function detectFormat(
  file: string,
  given: KbFileFormat | undefined,
): Promise<KbFileFormat> {
  if (given) return given;
  const ext = path.extname(file).toLowerCase();
  if (ext === '.jsonl' || ext === '.ndjson') return 'jsonl';
  if (ext === '.csv') return 'csv';
  let first: string;
  try {
    const handle = await open(file, 'r');
    try {
      const { buffer, bytesRead } = await handle.read(Buffer.alloc(4096), 0, 4096, 0);
      first = buffer
        .subarray(0, bytesRead)
        .toString('utf8')
        .replace(/^\uFEFF/, '')
        .trimStart();
    } finally {
      await handle.close();
    }
  } catch (err) {
    throw unreadable(file, err);
  }
  if (first.startsWith('[')) return 'json';
  if (first.startsWith('{')) return 'jsonl';
  throw new ImportError(`cannot tell the format of ${file}: give --format jsonl, csv or json`);
}

/**
 * Reads the file row by row, sends batches of at most batchSize rows (and 8 MiB) with `send`,
 * and returns the totals with every failure at its source line. An error from `send` (or an
 * unreadable file) aborts; batches already sent stay imported.
 */
export async function importKbFile(options: {
  file: string;
  format: KbFileFormat;
  batchSize: number;
  send: (jsonLines: string) => Promise<BatchResult>;
  progress: ImportProgress;
}): Promise<ImportSummary> {
  const { file, format, batchSize, send, progress } = options;
  let size: number;
  try {
    size = (await stat(file)).size;
  } catch (err) {
    throw unreadable(file, err);
  }
  const stream = createReadStream(file, { encoding: 'utf8' });
  const totals: ImportSummary = { inserted: 0, updated: 0, failed: [], rows: 0, batches: 0 };
  let pending: Array<{ line: number; item?: number; json: string; consumed: number }> = [];
  let pendingBytes = 0;

  const flush = async () => {
    if (pending.length === 0) return;
    const batch = pending;
    pending = [];
    pendingBytes = 0;
    const result = await send(`${batch.map((r) => r.json).join('\n')}\n`);
    totals.batches++;
    totals.inserted += result.inserted;
    totals.updated += result.updated;
    for (const f of result.failed) {
      const row = batch[f.line - 1];
      if (!row) throw new ImportError(`the admin API reported an unknown line ${f.line}`);
      totals.failed.push({
        line: row.line,
        ...(row.item !== undefined ? { item: row.item } : {}),
        message: f.message,
      });
    }
    progress.batch({
      batch: totals.batches,
      firstLine: batch[0]!.line,
      lastLine: batch[batch.length - 1]!.line,
      rows: batch.length,
      result,
      totals,
      bytesDone: batch[batch.length - 1]!.consumed,
    });
  };

  progress.start(size);
  let completed = false;
  try {
    for await (const row of readRows(stream, format)) {
      totals.rows++;
      if ('error' in row) {
        const { line, item, error } = row;
        totals.failed.push({ line, ...(item !== undefined ? { item } : {}), message: error });
        continue;
      }
      const bytes = Buffer.byteLength(row.json) + 1;
      if (pending.length > 0 && pendingBytes + bytes > MAX_BATCH_BYTES) await flush();
      pending.push(row);
      pendingBytes += bytes;
      if (pending.length >= batchSize) await flush();
    }
    await flush();
    completed = true;
  } catch (err) {
    throw (err as NodeJS.ErrnoException).syscall ? unreadable(file, err) : err;
  } finally {
    stream.destroy();
    progress.stop(completed);
  }
  totals.failed.sort((a, b) => a.line - b.line);
  return totals;
}

function unreadable(file: string, err: unknown): ImportError {
  const e = err as NodeJS.ErrnoException;
  return new ImportError(`cannot read ${file}: ${e.code ?? e.message}`);
}

function readRows(stream: ReadStream, format: KbFileFormat): AsyncGenerator<SourceRow> {
  switch (format) {
    case 'jsonl':
      return jsonLinesRows(stream);
    case 'json':
      return jsonArrayRows(stream);
    case 'csv':
      return csvRows(stream);
  }
}

/** Non-blank lines, sent as they are (the API reports lines that are not JSON). */
async function* jsonLinesRows(stream: ReadStream): AsyncGenerator<SourceRow> {
  let line = 0;
  let consumed = 0;
  for await (const text of createInterface({ input: stream, crlfDelay: Infinity })) {
    line++;
    consumed += Buffer.byteLength(text) + 1;
    const json = line === 1 ? text.replace(/^\uFEFF/, '') : text;
    if (json.trim()) yield { line, consumed, json };
  }
}

/** Elements of a top-level JSON array, each re-serialized onto one line. */
async function* jsonArrayRows(stream: ReadStream): AsyncGenerator<SourceRow> {
  let consumed = 0;
  for await (const { text, line, item } of jsonArrayElements(stream)) {
    consumed += Buffer.byteLength(text) + 1; // white space between elements is not counted
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch {
      yield { line, item, consumed, error: 'not valid JSON' };
      continue;
    }
    yield { line, item, consumed, json: JSON.stringify(value) };
  }
}

/**
 * Splits a top-level JSON array into the source text of its elements without holding the whole
 * file: tracks strings, escapes and nesting only, and leaves parsing each element to JSON.parse.
 */
export async function* jsonArrayElements(
  chunks: AsyncIterable<string>,
): AsyncGenerator<{ text: string; line: number; item: number }> {
  type State = 'before' | 'first' | 'next' | 'in' | 'done';
  let state = 'before' as State; // 'as': the loop changes it in ways narrowing cannot follow
  let line = 1;
  let item = 0;
  let depth = 0;
  let inString = false;
  let escaped = false;
  let parts: string[] = [];
  let startLine = 1;
  const malformed = (what: string) =>
    new ImportError(`the file is not a well-formed JSON array: ${what} at line ${line}`);

  for await (const chunk of chunks) {
    let from = 0; // start of the current element's text within this chunk
    for (let i = 0; i < chunk.length; i++) {
      const c = chunk[i]!;
      if (state === 'in') {
        if (inString) {
          if (escaped) escaped = false;
          else if (c === '\\') escaped = true;
          else if (c === '"') inString = false;
        } else if (c === '"') {
          inString = true;
        } else if (c === '{' || c === '[') {
          depth++;
        } else if ((c === '}' || c === ']') && depth > 0) {
          depth--;
        } else if (depth === 0 && (c === ',' || c === ']')) {
          parts.push(chunk.slice(from, i));
          yield { text: parts.join(''), line: startLine, item };
          parts = [];
          state = c === ',' ? 'next' : 'done';
        } else if (c === '}') {
          throw malformed("unexpected '}'");
        }
      } else if (c === ' ' || c === '\t' || c === '\r' || c === '\n' || c === '\uFEFF') {
        // white space between tokens
      } else if (state === 'before') {
        if (c !== '[') throw new ImportError('the file does not hold a JSON array');
        state = 'first';
      } else if (state === 'done') {
        throw malformed('unexpected content after the array');
      } else if (state === 'first' && c === ']') {
        state = 'done';
      } else if (c === ',' || c === ']') {
        throw malformed(`unexpected '${c}'`);
      } else {
        state = 'in';
        item++;
        startLine = line;
        depth = 0;
        from = i;
        i--; // the element's first character is read again in state 'in'
        continue;
      }
      if (c === '\n') line++;
    }
    if (state === 'in') parts.push(chunk.slice(from));
  }
  if (state === 'before') throw new ImportError('the file is empty');
  if (state !== 'done') throw malformed('unexpected end of file');
}

/**
 * CSV with a header row naming id, question, answer and optionally tags (split on | or ;).
 * Rows whose cells are all blank are skipped; other columns are ignored.
 */
async function* csvRows(stream: ReadStream): AsyncGenerator<SourceRow> {
  const parser = parseCsv({
    bom: true,
    relax_column_count: true,
    skip_empty_lines: true,
    raw: true,
  });
  pipeline(stream, parser, () => {}); // a read error reaches the loop below through the parser
  // csv-parse reports where a record ends; count the newlines of every raw record instead, so
  // a quoted field spanning lines still gives the line the record starts on.
  let nextLine = 1;
  let consumed = 0;
  let columns: { id: number; question: number; answer: number; tags: number } | undefined;
  try {
    for await (const { record, raw } of parser as AsyncIterable<{
      record: string[];
      raw: string;
    }>) {
      const skippedEmpty = /^(?:\r?\n)*/.exec(raw)![0];
      const line = nextLine + countNewlines(skippedEmpty);
      nextLine += countNewlines(raw);
      consumed += Buffer.byteLength(raw);
      if (!columns) {
        columns = csvColumns(record);
        continue;
      }
      if (record.every((cell) => !cell.trim())) continue;
      const cell = (i: number) => (i >= 0 ? (record[i] ?? '') : '');
      const tags = cell(columns.tags)
        .split(/[|;]/)
        .map((t) => t.trim())
        .filter(Boolean);
      const entry = {
        id: cell(columns.id).trim(),
        question: cell(columns.question),
        answer: cell(columns.answer),
        ...(tags.length > 0 ? { tags } : {}),
      };
      yield { line, consumed, json: JSON.stringify(entry) };
    }
  } catch (err) {
    if (err instanceof CsvError) throw new ImportError(`the file is not valid CSV: ${err.message}`);
    throw err;
  }
  if (!columns) throw new ImportError('the file is empty: expected a header row');
}

function csvColumns(header: string[]): {
  id: number;
  question: number;
  answer: number;
  tags: number;
} {
  const names = header.map((h) => h.trim().toLowerCase());
  const index = (name: string) => names.indexOf(name);
  const columns = {
    id: index('id'),
    question: index('question'),
    answer: index('answer'),
    tags: index('tags'),
  };
  if (columns.id < 0 || columns.question < 0 || columns.answer < 0) {
    throw new ImportError(
      `the CSV header must name the columns id, question and answer (tags optional); found: ${names.join(', ')}`,
    );
  }
  return columns;
}

function countNewlines(s: string): number {
  let n = 0;
  for (let i = s.indexOf('\n'); i >= 0; i = s.indexOf('\n', i + 1)) n++;
  return n;
}

/** A progress bar on a terminal. */
export function barProgress(stream: NodeJS.WriteStream): ImportProgress {
  const bar = new cliProgress.SingleBar(
    {
      format:
        'importing |{bar}| {percentage}% | {rows} rows | inserted {inserted}, updated {updated}, failed {failed}',
      stream,
      barsize: 30,
      hideCursor: false,
      clearOnComplete: false,
    },
    cliProgress.Presets.shades_classic,
  );
  const payload = { rows: 0, inserted: 0, updated: 0, failed: 0 };
  let total = 0;
  let started = false;
  return {
    start(totalBytes) {
      total = Math.max(totalBytes, 1);
      bar.start(total, 0, payload);
      started = true;
    },
    batch({ totals, bytesDone }) {
      payload.rows = totals.rows;
      payload.inserted = totals.inserted;
      payload.updated = totals.updated;
      payload.failed = totals.failed.length;
      bar.update(Math.min(bytesDone, total), payload);
    },
    stop(completed) {
      if (!started) return;
      started = false;
      if (completed) bar.update(total, payload);
      bar.stop();
    },
  };
}

/** One line per batch, for logs and pipes. */
export function lineProgress(write: (line: string) => void): ImportProgress {
  return {
    start() {},
    batch({ batch, firstLine, lastLine, rows, result }) {
      write(
        `batch ${batch}: ${rows} rows (lines ${firstLine}-${lastLine}): inserted ${result.inserted}, updated ${result.updated}, failed ${result.failed.length}`,
      );
    },
    stop() {},
  };
}
