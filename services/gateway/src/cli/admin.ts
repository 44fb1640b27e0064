#!/usr/bin/env node
// Admin CLI: a thin client of the gateway's admin API (DESIGN.md §5).
//   npm run admin -- orgs create "Acme" --id acme
// ADMIN_URL (default http://127.0.0.1:$ADMIN_PORT: 8081, or PORT_BASE + 1 as the gateway lays it
// out) and ADMIN_TOKEN (default: DATA_DIR/admin-token).
import { createReadStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import { Readable } from 'node:stream';
import { Command, InvalidArgumentError, Option } from 'commander';
import { withPortBase } from '@support-agent/shared/ports';
import { readAdminTokenFile } from '../data-access/admin-token-file.js';
import {
  barProgress,
  detectFormat,
  importKbFile,
  ImportError,
  KB_FILE_FORMATS,
  lineProgress,
  type BatchResult,
  type ImportSummary,
  type KbFileFormat,
} from './kb-import.js';

class CliError extends Error {
  constructor(
    message: string,
    readonly body?: unknown,
  ) {
    super(message);
  }
}

interface GlobalOptions {
  json?: boolean;
  url?: string;
}

type Json = Record<string, unknown>;

const program = new Command();
program
  .name('admin')
  .description(
    'Manage organizations, settings, API keys, tickets, knowledge bases, digests and triage models through the admin API.',
  )
  .option('--json', 'print machine-readable JSON')
  .option(
    '--url <url>',
    'admin API base URL (env ADMIN_URL, default http://127.0.0.1:$ADMIN_PORT: 8081, or PORT_BASE + 1)',
  )
  .showHelpAfterError()
  .configureOutput({ outputError: (str, write) => write(str) });

const globals = (): GlobalOptions => program.opts<GlobalOptions>();

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

const seg = (s: string): string => encodeURIComponent(s);

function nonNegativeInt(value: string): number {
  if (!/^[0-9]+$/.test(value)) throw new InvalidArgumentError('expected a non-negative integer');
  return Number(value);
}

function batchSize(value: string): number {
  if (!/^[0-9]+$/.test(value) || Number(value) < 1 || Number(value) > 10_000) {
    throw new InvalidArgumentError('expected an integer from 1 to 10000');
  }
  return Number(value);
}

function print(data: unknown, human: () => string): void {
  process.stdout.write(globals().json ? `${JSON.stringify(data, null, 2)}\n` : `${human()}\n`);
}

/** Plain-text table with aligned columns. */
function table(headers: string[], rows: string[][]): string {
  if (rows.length === 0) return '(none)';
  const widths = headers.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: string[]) =>
    cells
      .map((c, i) => c.padEnd(widths[i]!))
      .join('  ')
      .trimEnd();
  return [line(headers), ...rows.map(line)].join('\n');
}

function settingsText(s: Json): string {
  return [
    `rate_limit_per_key_per_min  ${s.rate_limit_per_key_per_min}`,
    `rate_limit_per_org_per_min  ${s.rate_limit_per_org_per_min}`,
    `deflection_monthly_limit    ${s.deflection_monthly_limit}`,
    `high_confidence_threshold   ${s.high_confidence_threshold}`,
  ].join('\n');
}

const orgs = program.command('orgs').description('organizations');
orgs
  .command('create <name>')
  .description('create an organization')
  .option(
    '--id <slug>',
    'organization id (lower-case letters, digits, hyphens); generated if omitted',
  )
  .action(async (name: string, opts: { id?: string }) => {
    const org = (await call('POST', '/orgs', { name, ...(opts.id ? { id: opts.id } : {}) }))!;
    print(org, () => `Created organization ${org.id} (${org.name})`);
  });
orgs
  .command('list')
  .description('list organizations with their settings')
  .action(async () => {
    const res = (await call('GET', '/orgs'))!;
    const list = res.orgs as Json[];
    print(res, () =>
      table(
        ['ID', 'NAME', 'CREATED', 'KEY/MIN', 'ORG/MIN', 'DEFLECTIONS/MONTH', 'THRESHOLD'],
        list.map((o) => {
          const s = o.settings as Json;
          return [
            String(o.id),
            String(o.name),
            String(o.created_at),
            String(s.rate_limit_per_key_per_min),
            String(s.rate_limit_per_org_per_min),
            String(s.deflection_monthly_limit),
            String(s.high_confidence_threshold),
          ];
        }),
      ),
    );
  });

program
  .command('settings')
  .description('organization settings')
  .command('set <org>')
  .description("change an organization's settings")
  .option('--rate-limit-per-key <n>', 'requests per minute per API key', nonNegativeInt)
  .option('--rate-limit-per-org <n>', 'requests per minute per organization', nonNegativeInt)
  .option('--deflection-limit <n>', 'high-confidence answers per calendar month', nonNegativeInt)
  .option(
    '--threshold <n>',
    'confidence (0-100) from which an answer is high-confidence',
    nonNegativeInt,
  )
  .action(
    async (
      org: string,
      opts: {
        rateLimitPerKey?: number;
        rateLimitPerOrg?: number;
        deflectionLimit?: number;
        threshold?: number;
      },
    ) => {
      const patch = {
        ...(opts.rateLimitPerKey !== undefined
          ? { rate_limit_per_key_per_min: opts.rateLimitPerKey }
          : {}),
        ...(opts.rateLimitPerOrg !== undefined
          ? { rate_limit_per_org_per_min: opts.rateLimitPerOrg }
          : {}),
        ...(opts.deflectionLimit !== undefined
          ? { deflection_monthly_limit: opts.deflectionLimit }
          : {}),
        ...(opts.threshold !== undefined ? { high_confidence_threshold: opts.threshold } : {}),
      };
      if (Object.keys(patch).length === 0) {
        throw new CliError(
          'nothing to change: give --rate-limit-per-key, --rate-limit-per-org, --deflection-limit or --threshold',
        );
      }
      const settings = (await call('PATCH', `/orgs/${seg(org)}/settings`, patch))!;
      print(settings, () => `Settings of ${org}:\n${settingsText(settings)}`);
    },
  );

const keys = program.command('keys').description('API keys');
keys
  .command('create <org>')
  .description('create an API key (the key is printed once)')
  .requiredOption(
    '--scopes <list>',
    'comma-separated: kb:read,faq:read,tickets:read,tickets:write,answers:write',
  )
  .option('--name <name>', 'a label for the key')
  .action(async (org: string, opts: { scopes: string; name?: string }) => {
    const scopes = opts.scopes
      .split(',')
      .map((s) => s.trim())
      .filter(Boolean);
    const created = (await call('POST', `/orgs/${seg(org)}/keys`, {
      scopes,
      ...(opts.name ? { name: opts.name } : {}),
    }))!;
    print(created, () =>
      [
        `Created key ${created.id} for ${org} with scopes ${(created.scopes as string[]).join(', ')}:`,
        '',
        `  ${created.key}`,
        '',
        'Store it now: it will not be shown again.',
      ].join('\n'),
    );
    if (globals().json) process.stderr.write('Store the key now: it will not be shown again.\n');
  });
keys
  .command('list <org>')
  .description("list an organization's API keys")
  .action(async (org: string) => {
    const res = (await call('GET', `/orgs/${seg(org)}/keys`))!;
    print(res, () =>
      table(
        ['ID', 'NAME', 'PREFIX', 'SCOPES', 'CREATED', 'REVOKED'],
        (res.keys as Json[]).map((k) => [
          String(k.id),
          String(k.name ?? ''),
          `${k.prefix}…`,
          (k.scopes as string[]).join(','),
          String(k.created_at),
          String(k.revoked_at ?? ''),
        ]),
      ),
    );
  });
keys
  .command('revoke <org> <id>')
  .description('revoke an API key (effective on every gateway within a second)')
  .action(async (org: string, id: string) => {
    await call('DELETE', `/orgs/${seg(org)}/keys/${seg(id)}`);
    print({ id, revoked: true }, () => `Revoked key ${id}`);
  });

const ticketsCommand = program.command('tickets').description('tickets');
ticketsCommand
  .command('set-status <org> <id> <status>')
  .description('change a ticket status (open, in_progress, resolved, closed, duplicate)')
  .action(async (org: string, id: string, status: string) => {
    const ticket = (await call('PATCH', `/orgs/${seg(org)}/tickets/${seg(id)}`, { status }))!;
    print(ticket, () => `Ticket ${ticket.id} is now ${ticket.status}`);
  });
ticketsCommand
  .command('set-category <org> <id> <category>')
  .description(
    "change a ticket's category (one of the organization's): the label joins its triage training set",
  )
  .action(async (org: string, id: string, category: string) => {
    const ticket = (await call('PATCH', `/orgs/${seg(org)}/tickets/${seg(id)}`, { category }))!;
    print(ticket, () => `Ticket ${ticket.id} is now in category ${ticket.category}`);
  });

registerTriageCommands(
  program.command('triage').description("each organization's own ticket triage (docs/triage.md)"),
);

const kb = program.command('kb').description('knowledge-base entries');
kb.command('import <org> <file>')
  .description(
    'import entries {id, question, answer, tags?} from JSON lines, a JSON array or CSV (header row id,question,answer,tags; tags separated by | or ;); existing ids are updated',
  )
  .addOption(
    new Option('--format <format>', 'file format (default: from the extension or content)').choices(
      KB_FILE_FORMATS,
    ),
  )
  .option('--batch <n>', 'entries per request', batchSize, 500)
  .option('--no-progress', 'print one line per batch instead of a progress bar')
  .action(
    async (
      org: string,
      file: string,
      opts: { format?: KbFileFormat; batch: number; progress: boolean },
    ) => {
      const json = globals().json === true;
      // stdout carries only the result with --json; the bar needs a terminal.
      const progress =
        opts.progress && !json && process.stdout.isTTY
          ? barProgress(process.stdout)
          : lineProgress((line) => (json ? process.stderr : process.stdout).write(`${line}\n`));
      let summary: ImportSummary;
      let batchesSent = 0;
      try {
        summary = await importKbFile({
          file,
          format: await detectFormat(file, opts.format),
          batchSize: opts.batch,
          progress,
          send: async (jsonLines) => {
            const result = await call(
              'POST',
              `/orgs/${seg(org)}/kb/entries`,
              jsonLines,
              'application/x-ndjson',
            );
            batchesSent++;
            return result as unknown as BatchResult;
          },
        });
      } catch (err) {
        if (err instanceof ImportError) throw new CliError(err.message);
        if (err instanceof CliError && batchesSent > 0) {
          throw new CliError(
            `${err.message}; ${batchesSent} batch(es) were imported before the failure (importing the file again is safe)`,
            err.body,
          );
        }
        throw err;
      }
      const { inserted, updated, failed } = summary;
      print({ inserted, updated, failed }, () =>
        [
          `inserted ${inserted}, updated ${updated}, failed ${failed.length}`,
          ...failed.map(
            (f) =>
              `  line ${f.line}${f.item !== undefined ? ` (item ${f.item})` : ''}: ${f.message}`,
          ),
        ].join('\n'),
      );
      if (failed.length > 0) process.exitCode = 2;
    },
  );
kb.command('delete <org> <id>')
  .description('delete one entry')
  .action(async (org: string, id: string) => {
    await call('DELETE', `/orgs/${seg(org)}/kb/entries/${seg(id)}`);
    print({ id, deleted: true }, () => `Deleted KB entry ${id}`);
  });
kb.command('count <org>')
  .description("count an organization's entries")
  .action(async (org: string) => {
    const res = (await call('GET', `/orgs/${seg(org)}/kb/entries/count`))!;
    print(res, () => `${res.count} KB entries in ${org}`);
  });

const digests = program.command('digests').description('FAQ digests');
digests
  .command('build <org>')
  .description(
    'build (or rebuild) the weekly FAQ digest and print its Markdown (--json: with its topics as data)',
  )
  .option('--week-start <date>', 'Monday of the ISO week, YYYY-MM-DD (default: last complete week)')
  .action(async (org: string, opts: { weekStart?: string }) => {
    const built = (await call(
      'POST',
      `/orgs/${seg(org)}/digests`,
      opts.weekStart !== undefined ? { week_start: opts.weekStart } : {},
    ))!;
    print(built, () => String(built.content).replace(/\n+$/, ''));
  });
digests
  .command('latest <org>')
  .description('print the latest digest (--json: with its topics as data)')
  .action(async (org: string) => {
    const latest = (await call('GET', `/orgs/${seg(org)}/digests/latest`))!;
    print(latest, () => String(latest.content).replace(/\n+$/, ''));
  });

program
  .command('usage <org>')
  .description("this month's deflections (high-confidence answers) against the limit")
  .action(async (org: string) => {
    const usage = (await call('GET', `/orgs/${seg(org)}/usage`))!;
    print(usage, () =>
      [
        `month             ${usage.month}`,
        `deflections_used  ${usage.deflections_used}`,
        `deflection_limit  ${usage.deflection_limit}`,
      ].join('\n'),
    );
  });

function pct(x: unknown): string {
  return typeof x === 'number' ? x.toFixed(3) : '-';
}

function reportText(report: Json | null | undefined): string {
  if (!report) return '(no report)';
  const rows = (report.categories as Json[]).map((c) => [
    String(c.category),
    pct(c.precision),
    pct(c.recall),
    pct(c.f1),
    String(c.support),
  ]);
  return [
    `cross-validated on ${report.examples} tickets (${report.folds} folds): macro-F1 ${pct(report.macro_f1)}, accuracy ${pct(report.accuracy)}`,
    table(['CATEGORY', 'PRECISION', 'RECALL', 'F1', 'TICKETS'], rows),
    `model ${Math.round(Number(report.model_bytes) / 1024)} KB, ${(Number(report.cpu_ms) / 1000).toFixed(1)} s of CPU`,
  ].join('\n');
}

function triageStatusText(s: Json): string {
  const examples = s.examples as Json[];
  const job = s.latest_job as Json | null;
  return [
    `categories        ${(s.categories as string[]).join(', ') || '(none: the built-in five)'}`,
    `active model      ${s.active_version}${s.active_version === 'builtin' ? '' : ` (${(s.active_categories as string[]).join(', ')})`}`,
    `examples          ${examples.map((e) => `${e.category} ${Number(e.uploaded) + Number(e.corrections)}`).join(', ') || '(none)'}`,
    `corrections since the last run  ${s.corrections_since_last_run}`,
    `automatic runs    ${s.auto_retrain ? `after ${(s.auto_retrain as Json).after_corrections} corrections${(s.auto_retrain as Json).activate ? ', activated' : ''}` : 'off'}`,
    `latest run        ${job ? `${job.id} ${job.state}${job.version ? ` → version ${job.version}` : ''}${job.error ? `: ${job.error}` : ''}` : '(none)'}`,
  ].join('\n');
}

function registerTriageCommands(triage: Command): void {
  triage
    .command('status <org>')
    .description('categories, training set, active model and latest training run')
    .action(async (org: string) => {
      const s = (await call('GET', `/orgs/${seg(org)}/triage`))!;
      print(s, () => triageStatusText(s));
    });
  triage
    .command('categories <org> <names...>')
    .description("set the organization's categories (2 to 50 names)")
    .action(async (org: string, names: string[]) => {
      const s = (await call('PUT', `/orgs/${seg(org)}/triage/categories`, { categories: names }))!;
      print(s, () => `Categories of ${org}: ${(s.categories as string[]).join(', ')}`);
    });
  triage
    .command('upload <org> <file>')
    .description(
      'upload labelled tickets: JSON lines {text | title+body, label, id?} or CSV with a header row (text or title,body; label; id)',
    )
    .addOption(
      new Option('--format <format>', 'file format (default: from the extension)').choices([
        'jsonl',
        'csv',
      ]),
    )
    .option('--replace', 'replace the tickets uploaded before (corrections stay)')
    .action(async (org: string, file: string, opts: { format?: string; replace?: boolean }) => {
      try {
        await stat(file);
      } catch (err) {
        throw new CliError(
          `cannot read ${file}: ${(err as NodeJS.ErrnoException).code ?? String(err)}`,
        );
      }
      const csv =
        (opts.format ?? (file.toLowerCase().endsWith('.csv') ? 'csv' : 'jsonl')) === 'csv';
      const res = (await call(
        'POST',
        `/orgs/${seg(org)}/triage/examples${opts.replace ? '?replace=true' : ''}`,
        createReadStream(file),
        csv ? 'text/csv' : 'application/x-ndjson',
      ))!;
      print(res, () =>
        [`added ${res.added}, updated ${res.updated}`, triageStatusText(res.triage as Json)].join(
          '\n',
        ),
      );
    });
  triage
    .command('train <org>')
    .description('start a training run (a background job); --wait follows it and prints its report')
    .option('--activate', 'activate the model when the run succeeds')
    .option('--wait', 'wait for the run to end and print its report')
    .action(async (org: string, opts: { activate?: boolean; wait?: boolean }) => {
      let job = (await call('POST', `/orgs/${seg(org)}/triage/training`, {
        activate: opts.activate === true,
      }))!;
      if (opts.wait) {
        let last = '';
        while (job.state === 'queued' || job.state === 'running') {
          await new Promise((r) => setTimeout(r, 1_000));
          job = (await call('GET', `/orgs/${seg(org)}/triage/training/${seg(String(job.id))}`))!;
          const line = `${job.state}: ${job.phase} (${Math.round(Number(job.progress) * 100)} %)`;
          if (line !== last && !globals().json) process.stderr.write(`${line}\n`);
          last = line;
        }
        if (job.state === 'failed') process.exitCode = 2;
      }
      print(job, () => {
        if (job.state === 'failed') return `Training run ${job.id} failed: ${job.error}`;
        if (job.state !== 'succeeded')
          return `Training run ${job.id} is ${job.state}; follow it with: triage job ${org} ${job.id}`;
        return [
          `Training run ${job.id} made version ${job.version}${job.activated ? ' (now active)' : ` (activate it with: triage activate ${org} ${job.version})`}`,
          reportText(job.report as Json | null),
        ].join('\n');
      });
    });
  triage
    .command('job <org> <id>')
    .description('a training run: its state, progress and report')
    .action(async (org: string, id: string) => {
      const job = (await call('GET', `/orgs/${seg(org)}/triage/training/${seg(id)}`))!;
      print(job, () =>
        [
          `${job.id} ${job.state}: ${job.phase} (${Math.round(Number(job.progress) * 100)} %)${job.error ? ` — ${job.error}` : ''}`,
          ...(job.report ? [reportText(job.report as Json)] : []),
        ].join('\n'),
      );
    });
  triage
    .command('versions <org>')
    .description("the organization's model versions, newest first")
    .action(async (org: string) => {
      const res = (await call('GET', `/orgs/${seg(org)}/triage/versions`))!;
      print(
        res,
        () =>
          table(
            ['VERSION', 'ACTIVE', 'CREATED', 'CATEGORIES', 'EXAMPLES', 'MACRO-F1'],
            (res.versions as Json[]).map((v) => {
              const report = v.report as Json | null;
              return [
                String(v.version),
                v.active ? '*' : '',
                String(v.created_at),
                (v.categories as string[]).join(','),
                String(report?.examples ?? ''),
                pct(report?.macro_f1),
              ];
            }),
          ) + `\nactive: ${res.active_version}`,
      );
    });
  triage
    .command('activate <org> <version>')
    .description('make a version the active one (`builtin`: back to the built-in classifier)')
    .action(async (org: string, version: string) => {
      const s = (await call('POST', `/orgs/${seg(org)}/triage/versions/${seg(version)}/activate`))!;
      print(s, () => `Active model of ${org}: ${s.active_version}`);
    });
  triage
    .command('rollback <org>')
    .description('re-activate the version that was active before the current one')
    .action(async (org: string) => {
      const s = (await call('POST', `/orgs/${seg(org)}/triage/rollback`))!;
      print(s, () => `Active model of ${org}: ${s.active_version}`);
    });
  triage
    .command('auto-retrain <org> <corrections>')
    .description('start a run by itself after this many corrections (0: off)')
    .option('--activate', "activate such a run's model when it succeeds")
    .action(async (org: string, corrections: string, opts: { activate?: boolean }) => {
      const s = (await call('PUT', `/orgs/${seg(org)}/triage/auto-retrain`, {
        after_corrections: nonNegativeInt(corrections),
        activate: opts.activate === true,
      }))!;
      print(s, () => triageStatusText(s));
    });
}

program.parseAsync(process.argv).catch((err: unknown) => {
  const message = err instanceof Error ? err.message : String(err);
  if (globals().json && err instanceof CliError && err.body !== undefined) {
    process.stderr.write(`${JSON.stringify(err.body)}\n`);
  } else {
    process.stderr.write(`error: ${message}\n`);
  }
  process.exitCode = 1;
});
