#!/usr/bin/env node
// Admin CLI: a thin client of the gateway's admin API (DESIGN.md §5).
//   npm run admin -- orgs create "Acme" --id acme
// ADMIN_URL (default http://127.0.0.1:$ADMIN_PORT, port 8081) and ADMIN_TOKEN (default: DATA_DIR/admin-token).
import { Command, InvalidArgumentError } from 'commander';
import { readAdminTokenFile } from '../data-access/admin-token-file.js';

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
  .description('Manage organizations, settings, API keys and tickets through the admin API.')
  .option('--json', 'print machine-readable JSON')
  .option('--url <url>', 'admin API base URL (env ADMIN_URL, default http://127.0.0.1:8081)')
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

async function call(method: string, path: string, body?: unknown): Promise<Json | undefined> {
  const fallback = `http://127.0.0.1:${process.env.ADMIN_PORT || 8081}`;
  const base = (globals().url ?? process.env.ADMIN_URL ?? fallback).replace(/\/+$/, '');
  const headers: Record<string, string> = { authorization: `Bearer ${adminToken()}` };
  if (body !== undefined) headers['content-type'] = 'application/json';
  let res: Response;
  try {
    res = await fetch(`${base}/admin/v1${path}`, {
      method,
      headers,
      ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
    });
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

program
  .command('tickets')
  .description('tickets')
  .command('set-status <org> <id> <status>')
  .description('change a ticket status (open, in_progress, resolved, closed, duplicate)')
  .action(async (org: string, id: string, status: string) => {
    const ticket = (await call('PATCH', `/orgs/${seg(org)}/tickets/${seg(id)}`, { status }))!;
    print(ticket, () => `Ticket ${ticket.id} is now ${ticket.status}`);
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
