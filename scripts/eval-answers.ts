// Answer quality end to end, through the real HTTP API of a running stack:
//
//   npm run eval:answers -- [corpus.jsonl queries.jsonl qrels.jsonl] [--off-topic issues.jsonl]
//                           [--off-topic-count 300] [--svg docs/answer-reliability.svg]
//
// Imports the FAQ corpus into a fresh organization (default settings, so the default
// high-confidence threshold applies; rate and deflection limits lifted), then for every
// query calls `GET /kb/search?limit=5` and `POST /answers`. An answer is right when the
// first source it cites is an entry relevant to the query (mapped back by its question).
// Prints precision and coverage of high-confidence answers at the default threshold, the
// precision/coverage curve over thresholds, expected calibration error of `confidence`,
// the share of queries whose answer cites a relevant entry first next to the share whose
// search puts one first, search MRR@5/nDCG@5, and the wrong deflections on off-topic
// questions (GitHub issues of NLBSE'24 asked against the same KB: every high-confidence
// answer to them is wrong). Writes the reliability diagram as SVG.
//
// Defaults: StackFAQ dev split and ../shared/data/nlbse24/train.jsonl (or STACKFAQ_DIR,
// NLBSE_FILE). Environment as for eval:search (BASE_URL, ADMIN_URL, ADMIN_TOKEN, DATA_DIR).
import { writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import {
  expectedCalibrationError,
  K,
  ndcg,
  type Outcome,
  precisionCoverage,
  readJsonl,
  reciprocalRank,
  reliabilityBins,
  reliabilitySvg,
} from '@support-agent/quality';
import { BASE_URL, call, createEvalOrg, mapConcurrently } from './lib/eval-api.js';
import { loadLabelledSet, REPO_ROOT } from './lib/labelled-set.js';

/** The API's limit on a question, in code points. */
const QUESTION_MAX = 2000;

const { values: opts, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    'off-topic': {
      type: 'string',
      default: process.env.NLBSE_FILE ?? resolve(REPO_ROOT, '../shared/data/nlbse24/train.jsonl'),
    },
    'off-topic-count': { type: 'string', default: '300' },
    svg: { type: 'string', default: 'docs/answer-reliability.svg' },
  },
});
const offTopicCount = Number(opts['off-topic-count']);
const svgPath = resolve(REPO_ROOT, opts.svg);

interface AnswerBody {
  answer: string;
  confidence: number;
  answered_fully: boolean;
  high_confidence: boolean;
  sources?: { question: string; score: number }[];
}

const pct = (x: number) => `${(100 * x).toFixed(1)} %`;

/** Every `step`-th issue, so all repositories of the file are represented. */
function spread<T>(items: T[], count: number): T[] {
  if (items.length <= count) return items;
  const step = items.length / count;
  return Array.from({ length: count }, (_, i) => items[Math.floor(i * step)]!);
}

function truncate(text: string, max: number): string {
  const points = [...text];
  return points.length <= max ? text : points.slice(0, max).join('');
}

async function main(): Promise<void> {
  const { corpus, queries, judgements } = loadLabelledSet(positionals);
  const issues = spread(
    readJsonl<{ title: string; body: string }>(opts['off-topic']),
    offTopicCount,
  ).map((i) => truncate(`${i.title}\n\n${i.body ?? ''}`.trim(), QUESTION_MAX));

  const { orgId, key, settings } = await createEvalOrg(
    'answers-eval',
    corpus,
    ['kb:read', 'answers:write'],
    {
      deflection_monthly_limit: 1_000_000,
    },
  );

  const idsByText = new Map<string, string[]>();
  const idsByQuestion = new Map<string, string[]>();
  for (const c of corpus) {
    const text = `${c.question}\u0000${c.answer}`;
    idsByText.set(text, [...(idsByText.get(text) ?? []), c.faq_id]);
    idsByQuestion.set(c.question, [...(idsByQuestion.get(c.question) ?? []), c.faq_id]);
  }
  const answer = (question: string) =>
    call<AnswerBody>(`${BASE_URL}/api/v1/agent/answers`, {
      method: 'POST',
      token: key,
      body: { question },
    }).then((r) => r.body);

  const results = await mapConcurrently(queries, async (q) => {
    const relevant = judgements.relevant.get(q.query_id) ?? new Set<string>();
    const { body: search } = await call<{ results: { question: string; answer: string }[] }>(
      `${BASE_URL}/api/v1/agent/kb/search?query=${encodeURIComponent(q.text)}&limit=${K}`,
      { token: key },
    );
    const ranking = search.results.map(
      (r, i) => idsByText.get(`${r.question}\u0000${r.answer}`)?.[0] ?? `unmapped:${i}`,
    );
    const a = await answer(q.text);
    const first = a.sources?.[0];
    const citedRight =
      first !== undefined &&
      (idsByQuestion.get(first.question) ?? []).some((id) => relevant.has(id));
    return {
      mrr: reciprocalRank(ranking, relevant, K),
      ndcg: ndcg(ranking, relevant, K),
      searchRight: ranking[0] !== undefined && relevant.has(ranking[0]),
      citedRight,
      confidence: a.confidence,
      high: a.high_confidence,
    };
  });
  const offTopic = await mapConcurrently(issues, (text) => answer(text));

  const n = results.length;
  const outcomes: Outcome[] = results.map((r) => ({ p: r.confidence / 100, right: r.citedRight }));
  const high = results.filter((r) => r.high);
  const wrongDeflections = offTopic.filter((a) => a.high_confidence).length;
  const mean = (f: (r: (typeof results)[number]) => number) =>
    results.reduce((s, r) => s + f(r), 0) / n;

  console.log(
    `organization ${orgId}: ${corpus.length} entries, ${n} queries, ${offTopic.length} off-topic issues via ${BASE_URL}\n`,
  );
  console.log(`Search (GET /kb/search, limit ${K}):`);
  console.log(`  MRR@5 ${mean((r) => r.mrr).toFixed(4)}  nDCG@5 ${mean((r) => r.ndcg).toFixed(4)}`);
  console.log(`  a relevant entry first: ${pct(mean((r) => (r.searchRight ? 1 : 0)))}`);
  console.log(
    `\nAnswers (POST /answers; the organization's threshold is the default, ${settings.high_confidence_threshold ?? '?'}):`,
  );
  console.log(
    `  cite a relevant entry first: ${pct(mean((r) => (r.citedRight ? 1 : 0)))}; cite nothing: ${results.filter((r) => r.confidence === 0).length}`,
  );
  console.log(
    `  high-confidence: coverage ${pct(high.length / n)}, precision ${pct(high.length === 0 ? 1 : high.filter((r) => r.citedRight).length / high.length)} (${high.length} answers)`,
  );
  console.log(
    `  expected calibration error of confidence: ${expectedCalibrationError(outcomes).toFixed(4)}`,
  );
  console.log(
    `  off-topic questions (NLBSE issues) answered with high confidence (wrong deflections): ${wrongDeflections} of ${offTopic.length} (${pct(wrongDeflections / offTopic.length)}); highest confidence ${Math.max(0, ...offTopic.map((a) => a.confidence))}`,
  );

  console.log('\n  threshold  coverage  precision  off-topic answered');
  const thresholds = [30, 40, 50, 60, 70, 75, 80, 85, 90, 95].map((t) => t / 100);
  for (const c of precisionCoverage(outcomes, thresholds)) {
    const wrong =
      offTopic.filter((a) => a.confidence / 100 >= c.threshold).length / offTopic.length;
    console.log(
      `  ${String(Math.round(c.threshold * 100)).padStart(9)}  ${pct(c.coverage).padStart(8)}  ${pct(c.precision).padStart(9)}  ${pct(wrong).padStart(18)}`,
    );
  }
  console.log('\n  reliability: confidence bin → answers, mean confidence, share right');
  for (const b of reliabilityBins(outcomes))
    console.log(
      `  ${String(Math.round(b.from * 100)).padStart(3)}–${String(Math.round(b.to * 100)).padEnd(3)} ${String(b.count).padStart(4)}  ${pct(b.meanConfidence).padStart(7)}  ${pct(b.accuracy).padStart(7)}`,
    );
  writeFileSync(
    svgPath,
    reliabilitySvg('Answer confidence vs share right (StackFAQ dev)', outcomes),
  );
  console.log(`\nreliability diagram: ${svgPath}`);
}

main().catch((err: unknown) => {
  console.error(`eval-answers: ${err instanceof Error ? err.message : String(err)}`);
  process.exit(1);
});
