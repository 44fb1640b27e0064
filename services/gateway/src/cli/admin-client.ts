// The admin CLI's client side: calls of the admin API and how their answers are printed,
// shared by every command group (admin.ts, triage-commands.ts).
import { Readable } from 'node:stream';
import { InvalidArgumentError } from 'commander';
import { withPortBase } from '@support-agent/shared/ports';
import { readAdminTokenFile } from '../data-access/admin-token-file.js';

export class CliError extends Error {
  constructor(
    message: string,
    readonly body?: unknown,
  ) {
    super(message);
  }
}

export interface GlobalOptions {
  json?: boolean;
  url?: string;
}

export type Json = Record<string, unknown>;

function adminToken(): string {
  const fromEnv = process.env.ADMIN_TOKEN?.trim();
  if (fromEnv) return fromEnv;
  const dataDir = process.env.DATA_DIR || './data';
  const fromFile = readAdminTokenFile(dataDir);
  if (fromFile) return fromFile;
  throw new CliError(
    `no admin token: set ADMIN_TOKEN, or DATA_DIR to the directory holding admin-token (tried ${dataDir})`,
  );
}

/** Where the gateway itself listens for admin calls: ADMIN_PORT, else PORT_BASE's layout, else 8081. */
function defaultAdminUrl(): string {
  try {
    return `http://127.0.0.1:${withPortBase(process.env, 'gateway').ADMIN_PORT || 8081}`;
  } catch (err) {
    throw new CliError(`PORT_BASE ${(err as Error).message}`);
  }
}

export const seg = (s: string): string => encodeURIComponent(s);

export function nonNegativeInt(value: string): number {
  if (!/^[0-9]+$/.test(value)) throw new InvalidArgumentError('expected a non-negative integer');
  return Number(value);
}

export function batchSize(value: string): number {
  if (!/^[0-9]+$/.test(value) || Number(value) < 1 || Number(value) > 10_000) {
    throw new InvalidArgumentError('expected an integer from 1 to 10000');
  }
  return Number(value);
}

/** Plain-text table with aligned columns. */
export function table(headers: string[], rows: string[][]): string {
  if (rows.length === 0) return '(none)';
  const widths = headers.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: string[]) =>
    cells
      .map((c, i) => c.padEnd(widths[i]!))
      .join('  ')
      .trimEnd();
  return [line(headers), ...rows.map(line)].join('\n');
}

/** The admin API's caller and printer, for the global options `globals()` returns. */
export function adminClient(globals: () => GlobalOptions) {
  /**
   * Calls the admin API; `body` is sent as JSON, or as it is when a content type is given (a
   * stream is streamed).
   */
  async function call(
    method: string,
    path: string,
    body?: unknown,
    contentType?: string,
  ): Promise<Json | undefined> {
    const base = (globals().url ?? process.env.ADMIN_URL ?? defaultAdminUrl()).replace(/\/+$/, '');
    const headers: Record<string, string> = { authorization: `Bearer ${adminToken()}` };
    if (body !== undefined) headers['content-type'] = contentType ?? 'application/json';
    let res: Response;
    try {
      const payload =
        body instanceof Readable
          ? { body: Readable.toWeb(body) as ReadableStream, duplex: 'half' as const }
          : body !== undefined
            ? { body: contentType !== undefined ? String(body) : JSON.stringify(body) }
            : {};
      res = await fetch(`${base}/admin/v1${path}`, { method, headers, ...payload });
    } catch (err) {
      const cause = (err as { cause?: { code?: string; message?: string } }).cause;
      throw new CliError(
        `cannot reach the admin API at ${base} (${cause?.code ?? cause?.message ?? String(err)}); is the gateway running?`,
      );
    }
    const text = await res.text();
    let parsed: unknown;
    try {
      parsed = text ? JSON.parse(text) : undefined;
    } catch {
      parsed = undefined;
    }
    if (!res.ok) {
      const error = (parsed as { error?: { message?: string; code?: string } } | undefined)?.error;
      const message = error?.message ?? `HTTP ${res.status}`;
      throw new CliError(error?.code ? `${message} (${error.code})` : message, parsed);
    }
    return parsed as Json | undefined;
  }

  function print(data: unknown, human: () => string): void {
    process.stdout.write(globals().json ? `${JSON.stringify(data, null, 2)}\n` : `${human()}\n`);
  }

  return { call, print };
}
