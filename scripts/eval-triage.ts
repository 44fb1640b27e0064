// Measures the triage classifier on labelled issues (e.g. /work/shared/data/nlbse24/train.jsonl).
//
//   npm run eval:triage -- <file.jsonl>                 ClassifyTicket on a running answers service (ANSWERS_ADDR)
//   npm run eval:triage -- <file.jsonl> --in-process    the built-in classifier, without a service
//
// Each row {title, body, label: bug|feature|question} is classified from `title + "\n\n" + body`.
// The five categories fold into three: bug, feature (feature_request), question (how_to,
// general_question, documentation). Prints per-class precision/recall/F1, macro-F1, the
// confusion matrix, the calibration error of the probabilities and (in process) the CPU
// time per classification. Measurement only: nothing here feeds back into training.
import { readFileSync } from 'node:fs';
import { callUnary, createGrpcClient, mapConcurrently } from '@support-agent/shared';
import { answers } from '@support-agent/proto';
import { classify, loadTriageModel } from '@support-agent/answers/triage';
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
}

function usage(): never {
  process.stderr.write(
    'usage: npm run eval:triage -- <file.jsonl> [--in-process] [--concurrency N]\n',
  );
  process.exit(2);
}

function parseArgs(argv: string[]): { file: string; inProcess: boolean; concurrency: number } {
  let file: string | undefined;
  let inProcess = false;
  let concurrency = 8;
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    if (a === '--in-process') inProcess = true;
    else if (a === '--concurrency') concurrency = Number(argv[++i]);
    else if (a.startsWith('-')) usage();
    else file = a;
  }
  if (!file || !Number.isInteger(concurrency) || concurrency < 1) usage();
  return { file, inProcess, concurrency };
}

function readRows(file: string): Row[] {
  return readFileSync(file, 'utf8')
    .split('\n')
    .filter((l) => l.trim())
    .map((l, i) => {
      const row = JSON.parse(l) as Row;
      if (!CLASSES.includes(row.label as EvalClass))
        throw new Error(`line ${i + 1}: label must be bug, feature or question`);
      return row;
    });
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
      await callUnary(client.classifyTicket.bind(client), { content: text }, { timeoutMs: 60_000 }),
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
  const rows = readRows(args.file);
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
      classifyText(`${r.title ?? ''}\n\n${r.body ?? ''}`),
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
