// What an organization's own triage costs (docs/triage.md, "Cost"): a training run's CPU time
// and peak memory on 300, 3,000 and 10,000 tickets, the model file's size, the CPU of classifying a
// ticket, and (with --stack) the API's p99 while a training run goes on, against quiet.
//
//   npm run bench:triage                         training runs and classification, in process
//   npm run bench:triage -- --file issues.jsonl  the 300-ticket run on the first 300 rows of a
//                                                labelled file ({title, body, label} or {text, label})
//   npm run bench:triage -- --stack              also the API p99 against a running `npm start`
//                                                (PORT, ADMIN_PORT, ADMIN_TOKEN; KB search, 20 s
//                                                quiet, then 20 s during a 10,000-ticket run,
//                                                then 20 s quiet again after it)
//   npm run bench:triage -- --stack-only         the API p99 alone
//
// Each training run is the production one (the training worker, a child process at nice 19,
// or --nice N):
// its CPU time as the worker reports it, its peak RSS read from /proc while it runs. Without a
// file, the tickets are the built-in model's generated ones (training/generator), five kinds.
import { fork } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { setPriority } from 'node:os';
import { parseArgs } from 'node:util';
import autocannon from 'autocannon';
import { classifyWithOrgModel, loadOrgModel } from '../src/domain/org-triage/org-model.js';
import {
  DEFAULT_TRAIN_SETTINGS,
  type LabelledText,
} from '../src/domain/org-triage/train-org-model.js';
import { loadTriageModel } from '../src/domain/triage-model.js';
import type { TrainRequest, WorkerMessage } from '../src/entry-points/jobs/training-protocol.js';
import { generated } from '../training/dataset.js';

const { values } = parseArgs({
  options: {
    file: { type: 'string' },
    stack: { type: 'boolean', default: false },
    'stack-only': { type: 'boolean', default: false },
    'after-wait': { type: 'string', default: '600' },
    seconds: { type: 'string', default: '20' },
    // CPU time does not depend on it; on a busy machine 19 stretches the wall time a lot.
    nice: { type: 'string', default: '19' },
  },
});

function fileTickets(file: string): LabelledText[] {
  return readFileSync(file, 'utf8')
    .split('\n')
    .filter((l) => l.trim())
    .map((l) => {
      const r = JSON.parse(l) as Record<string, string>;
      return { text: r.text ?? `${r.title ?? ''}\n\n${r.body ?? ''}`, label: String(r.label) };
    });
}

const generatedTickets = (n: number, seed: number): LabelledText[] =>
  generated(n, seed).map((e) => ({ text: e.text, label: e.label }));

interface RunCost {
  tickets: number;
  wallS: number;
  cpuS: number;
  peakRssMb: number;
  modelBytes: number;
  macroF1: number;
  model: string;
}

/** One training run in the production worker process; peak RSS sampled every 100 ms. */
function trainInWorker(examples: LabelledText[]): Promise<RunCost> {
  const categories = [...new Set(examples.map((e) => e.label))].sort();
  const started = Date.now();
  const child = fork(new URL('../src/training-worker.ts', import.meta.url), [], {
    execArgv: ['--import', 'tsx', '--max-old-space-size=2048'],
    serialization: 'advanced',
  });
  if (child.pid !== undefined) setPriority(child.pid, Number(values.nice));
  let peak = 0;
  const sampler = setInterval(() => {
    try {
      const m = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${child.pid}/status`, 'utf8'));
      if (m) peak = Math.max(peak, Number(m[1]) / 1024);
    } catch {
      // gone
    }
  }, 100);
  return new Promise((resolve, reject) => {
    child.on('message', (m: WorkerMessage) => {
      if (m.kind === 'progress') return;
      clearInterval(sampler);
      if (m.kind === 'failed') return reject(new Error(m.error));
      resolve({
        tickets: examples.length,
        wallS: (Date.now() - started) / 1000,
        cpuS: m.cpuMs / 1000,
        peakRssMb: Math.round(peak),
        modelBytes: Buffer.byteLength(m.model),
        macroF1: m.report.macroF1,
        model: m.model,
      });
    });
    child.on('exit', (code) => {
      clearInterval(sampler);
      reject(new Error(`worker exited ${code}`));
    });
    child.send({ examples, categories } satisfies TrainRequest);
  });
}

function printCost(c: RunCost, what: string): void {
  console.log(
    `train ${c.tickets} tickets (${what}): ${c.cpuS.toFixed(1)} s CPU, ${c.wallS.toFixed(1)} s wall, peak RSS ${c.peakRssMb} MB, model ${(c.modelBytes / 1024).toFixed(0)} KB, cross-validated macro-F1 ${c.macroF1.toFixed(3)}`,
  );
}

/** Mean CPU per classification with a trained model, over `texts` (after a warm-up pass). */
function classifyCpu(model: string, texts: string[]): number {
  const loaded = loadOrgModel(JSON.parse(model), loadTriageModel());
  for (const t of texts.slice(0, 200)) classifyWithOrgModel(loaded, t);
  const before = process.cpuUsage();
  for (const t of texts) classifyWithOrgModel(loaded, t);
  const used = process.cpuUsage(before);
  return (used.user + used.system) / 1000 / texts.length;
}

async function admin(method: string, path: string, body?: string, type?: string): Promise<unknown> {
  const res = await fetch(`http://127.0.0.1:${process.env.ADMIN_PORT ?? 8081}/admin/v1${path}`, {
    method,
    headers: {
      authorization: `Bearer ${process.env.ADMIN_TOKEN}`,
      ...(body !== undefined ? { 'content-type': type ?? 'application/json' } : {}),
    },
    ...(body !== undefined ? { body } : {}),
  });
  const json = (await res.json()) as unknown;
  if (!res.ok) throw new Error(`${method} ${path}: ${JSON.stringify(json)}`);
  return json;
}

/** KB search p99 through the gateway, quiet and during a 10,000-ticket training run. */
async function apiDuringTraining(seconds: number): Promise<void> {
  const org = `bench-triage-${Date.now()}`;
  await admin('POST', '/orgs', JSON.stringify({ name: org, id: org }));
  const { key } = (await admin(
    'POST',
    `/orgs/${org}/keys`,
    JSON.stringify({ scopes: ['kb:read'] }),
  )) as { key: string };
  const tickets = generatedTickets(10_000, 7);
  await admin(
    'PUT',
    `/orgs/${org}/triage/categories`,
    JSON.stringify({ categories: [...new Set(tickets.map((t) => t.label))].sort() }),
  );
  await admin(
    'POST',
    `/orgs/${org}/triage/examples`,
    tickets.map((t) => JSON.stringify(t)).join('\n'),
    'application/x-ndjson',
  );
  const load = () =>
    autocannon({
      url: `http://127.0.0.1:${process.env.PORT ?? 8080}/api/v1/agent/kb/search?query=reset%20my%20password`,
      headers: { authorization: `Bearer ${key}` },
      connections: 8,
      duration: seconds,
    });
  const quiet = await load();
  const job = (await admin('POST', `/orgs/${org}/triage/training`, '{}')) as { id: string };
  await new Promise((r) => setTimeout(r, 3_000)); // the run is under way
  const busy = await load();
  const run = () =>
    admin('GET', `/orgs/${org}/triage/training/${job.id}`) as Promise<{ state: string }>;
  const state = await run();
  const p99 = (r: autocannon.Result) =>
    `${r.latency.p99} ms (${Math.round(r.requests.average)} req/s)`;
  const change = (a: number, b: number) => `${((a / b - 1) * 100).toFixed(0)} %`;
  console.log(
    `API p99 (KB search, 8 connections, ${seconds} s each): quiet ${p99(quiet)}, during training ${p99(busy)}: ${change(busy.latency.p99, quiet.latency.p99)}; the run was ${state.state} ${seconds} s in`,
  );
  // Quiet again once the run is over (up to --after-wait seconds): the spread between the two
  // quiet windows is the noise other work on the machine adds.
  const deadline = Date.now() + Number(values['after-wait']) * 1000;
  while (['queued', 'running'].includes((await run()).state)) {
    if (Date.now() > deadline) return console.log('the run did not end within --after-wait');
    await new Promise((r) => setTimeout(r, 2_000));
  }
  const after = await load();
  console.log(
    `quiet after the run ${p99(after)}; during vs the mean of both quiet windows ${change(busy.latency.p99, (quiet.latency.p99 + after.latency.p99) / 2)}`,
  );
}

if (values['stack-only']) {
  await apiDuringTraining(Number(values.seconds));
  process.exit(0);
}
const small = values.file ? fileTickets(values.file).slice(0, 300) : generatedTickets(300, 3);
const c300 = await trainInWorker(small);
printCost(c300, values.file ? values.file : 'generated');
const texts = (values.file ? fileTickets(values.file) : generatedTickets(1_500, 5)).map(
  (t) => t.text,
);
console.log(
  `classify: ${classifyCpu(c300.model, texts).toFixed(3)} ms CPU per ticket (mean over ${texts.length})`,
);
// The largest training set that still gets dropout copies (train-org-model.ts): the most
// costly run per ticket.
const c3k = await trainInWorker(generatedTickets(DEFAULT_TRAIN_SETTINGS.dropoutMaxExamples, 11));
printCost(c3k, 'generated, five categories, with dropout copies');
const c10k = await trainInWorker(generatedTickets(10_000, 7));
printCost(c10k, 'generated, five categories');
console.log(
  `classify: ${classifyCpu(c10k.model, texts).toFixed(3)} ms CPU per ticket with the 10,000-ticket model`,
);
if (values.stack) await apiDuringTraining(Number(values.seconds));
