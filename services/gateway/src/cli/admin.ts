#!/usr/bin/env node
// Admin CLI: a thin client of the gateway's admin API (DESIGN.md §5).
//   npm run admin -- orgs create "Acme" --id acme
// ADMIN_URL (default http://127.0.0.1:$ADMIN_PORT: 8081, or PORT_BASE + 1 as the gateway lays it
// out) and ADMIN_TOKEN (default: DATA_DIR/admin-token).
import { Command, Option } from 'commander';
import {
  adminClient,
  batchSize,
  CliError,
  nonNegativeInt,
  seg,
  table,
  type GlobalOptions,
  type Json,
} from './admin-client.js';
import { registerTriageCommands } from './triage-commands.js';
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
const { call, print } = adminClient(globals);

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
  { call, print },
  globals,
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

program.parseAsync(process.argv).catch((err: unknown) => {
  const message = err instanceof Error ? err.message : String(err);
  if (globals().json && err instanceof CliError && err.body !== undefined) {
    process.stderr.write(`${JSON.stringify(err.body)}\n`);
  } else {
    process.stderr.write(`error: ${message}\n`);
  }
  process.exitCode = 1;
});
