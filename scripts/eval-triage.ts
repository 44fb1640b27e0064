// Measures the triage classifier on labelled issues (e.g. /work/shared/data/nlbse24/train.jsonl).
//
//   npm run eval:triage -- <file.jsonl>                 ClassifyTicket on a running answers service (ANSWERS_ADDR)
//   npm run eval:triage -- <file.jsonl> --in-process    the built-in classifier, without a service
//   npm run eval:triage -- <file.jsonl> --org acme      acme's active model, through the running service
//   npm run eval:triage -- <file.jsonl> --model m.json  an organization's model file, in process
//                                                       (admin API GET …/triage/versions/{v}/model)
//
// Each row {title, body, label} (or {text, label}) is classified from `title + "\n\n" + body`.
// With the built-in classifier the labels are bug, feature and question, and the five categories
// fold into those three: bug, feature (feature_request), question (how_to, general_question,
// documentation). With an organization's model (--org, --model) the labels are its own
// categories, compared as they are. Prints per-class precision/recall/F1, macro-F1, the
// confusion matrix, the calibration error of the probabilities and (in process) the CPU
// time per classification. Measurement only: nothing here feeds back into training.
import { readFileSync } from 'node:fs';
import { callUnary, createGrpcClient, mapConcurrently } from '@support-agent/shared';
import { answers } from '@support-agent/proto';
import {
  classify,
  classifyWithOrgModel,
  loadOrgModel,
  loadTriageModel,
} from '@support-agent/answers/triage';
import { classScores, type ClassScores } from '@support-agent/quality';

/** The labels of the data: the five categories fold into these three (FOLD). */
const CLASSES = ['bug', 'feature', 'question'] as const;
type EvalClass = (typeof CLASSES)[number];
const scoreFolded = (gold: EvalClass[], predicted: EvalClass[]) =>
  classScores(CLASSES, gold, predicted);

const FOLD: Record<string, EvalClass> = {
  bug: 'bug',
  feature_request: 'feature',
  how_to: 'question',
  general_question: 'question',
  documentation: 'question',
};

interface Row {
  id?: string;
  repo?: string;
  label: string;
  title?: string;
  body?: string;
  text?: string;
}

function usage(): never {
  process.stderr.write(
    'usage: npm run eval:triage -- <file.jsonl> [--in-process | --org ORG | --model FILE] [--concurrency N]\n',
  );
  process.exit(2);
}

interface Args {
  file: string;
  inProcess: boolean;
  concurrency: number;
  /** An organization whose active model the running service uses. */
  org?: string;
  /** An organization's model file, used in process. */
  model?: string;
}

function parseArgs(argv: string[]): Args {
  let file: string | undefined;
  let inProcess = false;
  let concurrency = 8;
  let org: string | undefined;
  let model: string | undefined;
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    if (a === '--in-process') inProcess = true;
    else if (a === '--org') org = argv[++i];
    else if (a === '--model') model = argv[++i];
    else if (a === '--concurrency') concurrency = Number(argv[++i]);
    else if (a.startsWith('-')) usage();
    else file = a;
  }
  if (!file || !Number.isInteger(concurrency) || concurrency < 1) usage();
  if ([inProcess, org !== undefined, model !== undefined].filter(Boolean).length > 1) usage();
  return {
    file,
    inProcess,
    concurrency,
    ...(org !== undefined ? { org } : {}),
    ...(model !== undefined ? { model } : {}),
  };
}

function readRows(file: string, ownLabels: boolean): Row[] {
  return readFileSync(file, 'utf8')
    .split('\n')
    .filter((l) => l.trim())
    .map((l, i) => {
      const row = JSON.parse(l) as Row;
      if (ownLabels ? typeof row.label !== 'string' : !CLASSES.includes(row.label as EvalClass))
        throw new Error(
          `line ${i + 1}: ${ownLabels ? 'label is missing' : 'label must be bug, feature or question'}`,
        );
      return row;
    });
}

const textOf = (r: Row) => r.text ?? `${r.title ?? ''}\n\n${r.body ?? ''}`;

/**
 * Scores an organization's own model (its active one through the service, or a model file in
 * process) on rows labelled with its own categories: per-category precision/recall/F1, per repo.
 */
async function scoreOwnModel(args: Args, rows: Row[]): Promise<void> {
  let classifyText: Classifier;
  let close = () => {};
  if (args.model) {
    const model = loadOrgModel(JSON.parse(readFileSync(args.model, 'utf8')), loadTriageModel());
    classifyText = async (text) => classifyWithOrgModel(model, text);
  } else {
    const address = process.env.ANSWERS_ADDR ?? '127.0.0.1:50053';
    const client = createGrpcClient(answers.AnswersServiceClient, address);
    classifyText = async (text) => {
      const res = await callUnary(
        client.classifyTicket.bind(client),
        { content: text, orgId: args.org! },
        { timeoutMs: 60_000 },
      );
      if (res.modelVersion === 0) throw new Error(`organization ${args.org} has no active model`);
      return res;
    };
    close = () => client.close();
  }
  console.log(
    `${rows.length} rows from ${args.file}; classifier: ${args.model ? `model file ${args.model}, in process` : `${args.org}'s active model (ClassifyTicket)`}`,
  );
  const cpuBefore = process.cpuUsage();
  let labelled: Labelled[];
  try {
    labelled = await mapConcurrently(rows, args.model ? 1 : args.concurrency, (r) =>
      classifyText(textOf(r)),
    );
  } finally {
    close();
  }
  const cpu = process.cpuUsage(cpuBefore);
  const categories = [
    ...new Set([...rows.map((r) => r.label), ...labelled.map((l) => l.category)]),
  ].sort();
  const report = (title: string, idx: number[]) => {
    const s = classScores(
      categories,
      idx.map((i) => rows[i]!.label),
      idx.map((i) => labelled[i]!.category),
    );
    const f = (x: number) => x.toFixed(3);
    console.log(`\n${title}\nmacro-F1 ${f(s.macroF1)}   accuracy ${f(s.accuracy)}`);
    for (const c of categories) {
      const k = s.perClass[c]!;
      if (k.support > 0 || k.precision > 0)
        console.log(
          `  ${c.padEnd(20)} precision ${f(k.precision)}  recall ${f(k.recall)}  f1 ${f(k.f1)}  support ${k.support}`,
        );
    }
  };
  report(
    'overall',
    rows.map((_, i) => i),
  );
  const repos = [...new Set(rows.map((r) => r.repo).filter((r): r is string => !!r))].sort();
  if (repos.length > 1)
    for (const repo of repos)
      report(
        `repo ${repo}`,
        rows.flatMap((r, i) => (r.repo === repo ? [i] : [])),
      );
  if (args.model) {
    const perRow = (cpu.user + cpu.system) / 1000 / Math.max(1, rows.length);
    console.log(`\nCPU per classification (in process, mean): ${perRow.toFixed(3)} ms`);
  }
}

interface Labelled {
  category: string;
  /** Per-category probabilities; empty when an LLM labelled. */
  probabilities: Record<string, number>;
}
type Classifier = (text: string) => Promise<Labelled>;

function inProcessClassifier(): Classifier {
  const model = loadTriageModel();
  return async (text) => classify(model, text);
}

function serviceClassifier(address: string): { classify: Classifier; close(): void } {
  const client = createGrpcClient(answers.AnswersServiceClient, address);
  return {
    classify: async (text) =>
      await callUnary(
        client.classifyTicket.bind(client),
        { content: text, orgId: '' },
        { timeoutMs: 60_000 },
      ),
    close: () => client.close(),
  };
}

/**
 * Expected calibration error of the folded prediction's probability (10 bins): how far
 * "the classifier says 80 %" is from being right 80 % of the time.
 */
function calibrationError(labelled: Labelled[], gold: EvalClass[]): number | undefined {
  const bins = Array.from({ length: 10 }, () => ({ n: 0, p: 0, right: 0 }));
  for (const [i, l] of labelled.entries()) {
    if (Object.keys(l.probabilities).length === 0) return undefined;
    const folded = { bug: 0, feature: 0, question: 0 } as Record<EvalClass, number>;
    for (const [c, p] of Object.entries(l.probabilities)) folded[FOLD[c]!] += p;
    const predicted = FOLD[l.category]!;
    const bin = bins[Math.min(9, Math.floor(folded[predicted] * 10))]!;
    bin.n++;
    bin.p += folded[predicted];
    bin.right += predicted === gold[i] ? 1 : 0;
  }
  return bins.reduce((s, b) => s + Math.abs(b.p - b.right), 0) / labelled.length;
}

type Scores = ClassScores<EvalClass>;

function report(title: string, s: Scores, detailed: boolean): void {
  const f = (x: number) => x.toFixed(3);
  console.log(`\n${title}`);
  if (detailed) {
    console.log('class      precision  recall  f1     support');
    for (const c of CLASSES) {
      const p = s.perClass[c];
      console.log(
        `${c.padEnd(10)} ${f(p.precision).padStart(9)}  ${f(p.recall).padStart(6)}  ${f(p.f1)}  ${String(p.support).padStart(7)}`,
      );
    }
  }
  console.log(`macro-F1 ${f(s.macroF1)}   accuracy ${f(s.accuracy)}`);
  if (detailed) {
    console.log('\nconfusion (rows = label, columns = prediction)');
    console.log(`${''.padEnd(10)}${CLASSES.map((c) => c.padStart(10)).join('')}`);
    for (const g of CLASSES)
      console.log(
        `${g.padEnd(10)}${CLASSES.map((p) => String(s.confusion[g][p]).padStart(10)).join('')}`,
      );
  }
}

async function main(): Promise<void> {
  const args = parseArgs(process.argv.slice(2));
  const own = args.org !== undefined || args.model !== undefined;
  const rows = readRows(args.file, own);
  if (own) return scoreOwnModel(args, rows);
  const address = process.env.ANSWERS_ADDR ?? '127.0.0.1:50053';
  const service = args.inProcess ? undefined : serviceClassifier(address);
  const classifyText = service?.classify ?? inProcessClassifier();
  console.log(
    `${rows.length} rows from ${args.file}; classifier: ${args.inProcess ? 'built-in, in process' : `ClassifyTicket at ${address}`}`,
  );

  const started = Date.now();
  const cpuBefore = process.cpuUsage();
  let labelled: Labelled[];
  try {
    labelled = await mapConcurrently(rows, args.inProcess ? 1 : args.concurrency, (r) =>
      classifyText(textOf(r)),
    );
  } finally {
    service?.close();
  }
  const cpu = process.cpuUsage(cpuBefore);
  const categories = labelled.map((l) => l.category);
  const gold = rows.map((r) => r.label as EvalClass);
  const predicted = categories.map((c) => {
    const folded = FOLD[c];
    if (!folded) throw new Error(`unexpected category ${c}`);
    return folded;
  });

  const counts = new Map<string, number>();
  for (const c of categories) counts.set(c, (counts.get(c) ?? 0) + 1);
  console.log(
    `predicted categories: ${[...counts]
      .sort()
      .map(([c, n]) => `${c} ${n}`)
      .join(', ')}`,
  );
  report('overall', scoreFolded(gold, predicted), true);
  const ece = calibrationError(labelled, gold);
  if (ece !== undefined)
    console.log(
      `expected calibration error of the predicted class's probability: ${ece.toFixed(3)}`,
    );

  const repos = [...new Set(rows.map((r) => r.repo).filter((r): r is string => !!r))].sort();
  if (repos.length > 1) {
    for (const repo of repos) {
      const idx = rows.flatMap((r, i) => (r.repo === repo ? [i] : []));
      report(
        `repo ${repo} (${idx.length} rows)`,
        scoreFolded(
          idx.map((i) => gold[i]!),
          idx.map((i) => predicted[i]!),
        ),
        false,
      );
    }
  }
  console.log(`\n${rows.length} rows in ${((Date.now() - started) / 1000).toFixed(1)} s`);
  if (args.inProcess) {
    const perRow = (cpu.user + cpu.system) / 1000 / Math.max(1, rows.length);
    console.log(`CPU per classification (in process, mean): ${perRow.toFixed(3)} ms`);
  }
}

main().catch((err: unknown) => {
  process.stderr.write(`eval-triage: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});
