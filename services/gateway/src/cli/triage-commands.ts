// `npm run admin -- triage …`: each organization's own ticket triage (docs/triage.md).
import { createReadStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import { Option, type Command } from 'commander';
import {
  CliError,
  nonNegativeInt,
  seg,
  table,
  type adminClient,
  type Json,
} from './admin-client.js';

type Client = ReturnType<typeof adminClient>;

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
    table(['CATEGORY', 'PRECISION', 'RECALL', 'F1', 'EXAMPLES'], rows),
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

/** Adds the triage commands to `triage`, calling the admin API through `client`. */
export function registerTriageCommands(
  triage: Command,
  { call, print }: Client,
  globals: () => { json?: boolean },
): void {
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
