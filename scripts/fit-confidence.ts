// Fits the search reranker and the answer confidence model from labelled queries:
//
//   npm run fit:confidence -- [corpus.jsonl queries.jsonl qrels.jsonl] [--dry-run] [--folds 5]
//                             [--out DIR] [--off-topic questions.txt]
//
// Input (JSON Lines, the StackFAQ layout; defaults to its dev split in ../shared/data):
//   corpus  {faq_id, question, answer}          the organization's KB
//   queries {query_id, thread_id, text}         questions asked; thread_id groups
//                                               near-identical questions (folds never split a group)
//   qrels   {query_id, faq_id, relevance}       which entries answer each question
// An organization can refit on its own labelled history: export its KB, the questions
// its agents answered and the entries that answered them, in that layout.
// Off-topic questions (one per line; default scripts/data/off-topic-questions.txt, written
// for this project) are asked against the same KB as questions it does not answer: their
// hits are the calibration's examples of a question with no answer in the KB.
//
// Writes services/knowledge/src/domain/rerank-model.json (ranker + calibration of hit
// scores) and services/answers/src/domain/confidence-model.json (answer confidence), or
// both files into DIR with --out, or nothing with --dry-run. Every figure printed is cross-validated by group: each query is
// scored by models fitted without its group (nested for the calibration steps).
import { readFileSync, writeFileSync } from 'node:fs';
import { basename, join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import {
  ANSWER_FEATURES,
  answerFeatures,
  answerProbability,
  type ConfidenceModel,
  type KbHit,
  relevantHits,
  SEARCH_LIMIT,
} from '@support-agent/answers/confidence';
import {
  competitorGaps,
  rankingScore,
  rerank,
  RERANK_FEATURES,
  type FeatureRow,
  type RerankModel,
  type RerankStage,
} from '@support-agent/knowledge/search';
import {
  expectedCalibrationError,
  fitListwise,
  fitLogistic,
  groupFolds,
  K,
  labelledQueries,
  type LabelledQuery,
  logLoss,
  ndcg,
  type Outcome,
  precisionCoverage,
  reciprocalRank,
  type Sample,
} from '@support-agent/quality';
import { loadLabelledSet, REPO_ROOT } from './lib/labelled-set.js';

const DEPTH = 20;
/** A hit below this probability is not offered as an answer (shipped in confidence-model.json). */
const RELEVANCE_FLOOR = 0.2;
const DENSE_FEATURES = new Set(['dense', 'denseRank']);

const { values: opts, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    'dry-run': { type: 'boolean', default: false },
    folds: { type: 'string', default: '5' },
    out: { type: 'string' },
    // Questions written for the project that no FAQ of a web application answers.
    'off-topic': {
      type: 'string',
      default: resolve(REPO_ROOT, 'scripts/data/off-topic-questions.txt'),
    },
  },
});
const FOLDS = Number(opts.folds);
const outDir = opts.out;
const offTopicFile = opts['off-topic'];

type Variant = 'hybrid' | 'lexical';
const FEATURES: Record<Variant, string[]> = {
  hybrid: [...RERANK_FEATURES],
  lexical: RERANK_FEATURES.filter((f) => !DENSE_FEATURES.has(f)),
};

const vector = (row: FeatureRow, features: string[]) =>
  features.map((f) => (row.features as Record<string, number>)[f]!);
const isRelevant = (q: LabelledQuery, row: FeatureRow) => q.relevant.has(row.candidate.entry.id);

/** Ranking scores and competitor gaps of a query's rows under a ranker. */
function scoreAndGaps(rows: FeatureRow[], ranker: RerankStage['ranker']) {
  const scored = rows.map((r) => ({
    question: r.questionKey,
    score: rankingScore(ranker, r.features),
  }));
  const gaps = competitorGaps(scored);
  return scored.map((s, i) => ({ score: s.score, gap: gaps[i]! }));
}

function fitRanker(queries: LabelledQuery[], variant: Variant): RerankStage['ranker'] {
  const features = FEATURES[variant];
  const weights = fitListwise(
    queries.map((q) => ({
      x: q[variant].map((r) => vector(r, features)),
      relevant: q[variant].map((r) => isRelevant(q, r)),
    })),
  );
  return { features, weights };
}

function calibrationSamples(
  queries: LabelledQuery[],
  variant: Variant,
  rankerOf: (q: LabelledQuery) => RerankStage['ranker'],
): Sample[] {
  const samples: Sample[] = [];
  for (const q of queries) {
    const rows = q[variant];
    scoreAndGaps(rows, rankerOf(q)).forEach((s, i) =>
      samples.push({
        x: [s.score, s.gap],
        y: isRelevant(q, rows[i]!) ? 1 : 0,
        group: q.group,
      }),
    );
  }
  return samples;
}

/**
 * A full stage (ranker + calibration) fitted on `queries` only: the calibration is fitted
 * on ranking scores of queries the ranker did not see (inner folds), as it is applied.
 */
function fitStage(queries: LabelledQuery[], variant: Variant): RerankStage {
  const ranker = fitRanker(queries, variant);
  const inner = groupFolds(
    queries.map((q) => q.group),
    FOLDS,
    7,
  );
  const innerRankers = Array.from({ length: FOLDS }, (_, f) =>
    fitRanker(
      queries.filter((q) => inner.get(q.group) !== f),
      variant,
    ),
  );
  const samples = calibrationSamples(queries, variant, (q) => innerRankers[inner.get(q.group)!]!);
  const fitted = fitLogistic(samples, { l2: 0.01 });
  if (fitted.weights[0]! >= 0 && fitted.weights[1]! >= 0)
    return {
      ranker,
      calibration: { bias: fitted.bias, score: fitted.weights[0]!, gap: fitted.weights[1]! },
    };
  // Both weights must be ≥ 0 for the calibrated scores to keep the ranker's order: refit
  // on the gap alone (it carries most of the evidence).
  const gapOnly = fitLogistic(
    samples.map((s) => ({ ...s, x: [s.x[1]!] })),
    { l2: 0.01 },
  );
  return {
    ranker,
    calibration: { bias: gapOnly.bias, score: 0, gap: Math.max(0, gapOnly.weights[0]!) },
  };
}

const modelOf = (stage: RerankStage): RerankModel => ({
  depth: DEPTH,
  hybrid: stage,
  lexicalOnly: stage,
});

/** The query's hits as knowledge would return them under `stage`. */
function hitsOf(stage: RerankStage, rows: FeatureRow[], limit: number): KbHit[] {
  return rerank(modelOf(stage), rows, true, limit).map((r) => ({
    entryId: r.candidate.entry.id,
    question: r.candidate.entry.question,
    answer: r.candidate.entry.answer,
    score: r.score,
  }));
}

interface CrossValidated {
  mrr: number;
  ndcg: number;
  firstStageMrr: number;
  firstStageNdcg: number;
  /** Hit-level outcomes (every returned hit). */
  hits: Outcome[];
  /**
   * Per question (covered or not): its top-5 hits under a stage fitted without its group,
   * and for a covered one the same against the KB without its relevant entries.
   */
  perQuery: { q: LabelledQuery; hits: KbHit[]; uncoveredHits: KbHit[] }[];
}

function crossValidate(queries: LabelledQuery[], variant: Variant): CrossValidated {
  const folds = groupFolds(
    queries.map((q) => q.group),
    FOLDS,
  );
  const out: CrossValidated = {
    mrr: 0,
    ndcg: 0,
    firstStageMrr: 0,
    firstStageNdcg: 0,
    hits: [],
    perQuery: [],
  };
  for (let f = 0; f < FOLDS; f++) {
    const stage = fitStage(
      queries.filter((q) => folds.get(q.group) !== f),
      variant,
    );
    for (const q of queries.filter((x) => folds.get(x.group) === f)) {
      const rows = q[variant];
      const hits = hitsOf(stage, rows, DEPTH);
      out.perQuery.push({
        q,
        hits: hits.slice(0, SEARCH_LIMIT),
        uncoveredHits: q.covered ? hitsOf(stage, q.uncovered, SEARCH_LIMIT) : [],
      });
      if (!q.covered) continue;
      const ranking = hits.map((h) => h.entryId);
      const firstStage = rows.map((r) => r.candidate.entry.id);
      out.mrr += reciprocalRank(ranking, q.relevant, K);
      out.ndcg += ndcg(ranking, q.relevant, K);
      out.firstStageMrr += reciprocalRank(firstStage, q.relevant, K);
      out.firstStageNdcg += ndcg(firstStage, q.relevant, K);
      for (const h of hits.slice(0, K))
        out.hits.push({ p: h.score, right: q.relevant.has(h.entryId) });
    }
  }
  const n = queries.filter((q) => q.covered).length;
  out.mrr /= n;
  out.ndcg /= n;
  out.firstStageMrr /= n;
  out.firstStageNdcg /= n;
  return out;
}

/** Answer-level samples: the answer cites the best relevant hit first (as the built-in provider does). */
function answerSamples(perQuery: CrossValidated['perQuery']): Sample[] {
  const samples: Sample[] = [];
  for (const { q, hits } of perQuery) {
    const top = relevantHits(hits, q.text)[0];
    if (!top) continue;
    const f = answerFeatures(hits, top.entryId, RELEVANCE_FLOOR);
    samples.push({
      x: ANSWER_FEATURES.map((k) => f[k]),
      y: q.relevant.has(top.entryId) ? 1 : 0,
      group: q.group,
    });
  }
  return samples;
}

function fitConfidence(samples: Sample[]): ConfidenceModel {
  const fitted = fitLogistic(samples, { l2: 1 });
  return {
    features: [...ANSWER_FEATURES],
    weights: fitted.weights,
    bias: fitted.bias,
    relevanceFloor: RELEVANCE_FLOOR,
  };
}

const pct = (x: number) => `${(100 * x).toFixed(1)} %`;
const round = (x: number) => Math.round(x * 1e6) / 1e6;

async function main(): Promise<void> {
  const collection = loadLabelledSet(positionals);
  console.log(
    `fit-confidence: ${collection.corpus.length} entries, ${collection.queries.length} queries (${collection.queriesPath}); ${FOLDS}-fold cross-validation by group\n`,
  );
  const offTopicQuestions = readFileSync(offTopicFile, 'utf8')
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l !== '' && !l.startsWith('#'));
  const queries = await labelledQueries(collection, DEPTH, offTopicQuestions);
  console.log(
    `off-topic questions (no relevant entry; calibration negatives): ${offTopicQuestions.length} from ${offTopicFile}\n`,
  );

  const cv = crossValidate(queries, 'hybrid');
  const cvLexical = crossValidate(queries, 'lexical');
  console.log('Search (cross-validated by group, top 5):');
  console.log(
    `  first stage only:  MRR@5 ${cv.firstStageMrr.toFixed(4)}  nDCG@5 ${cv.firstStageNdcg.toFixed(4)}`,
  );
  console.log(`  reranked:          MRR@5 ${cv.mrr.toFixed(4)}  nDCG@5 ${cv.ndcg.toFixed(4)}`);
  console.log(
    `  lexical-only fallback: first stage MRR@5 ${cvLexical.firstStageMrr.toFixed(4)}, reranked ${cvLexical.mrr.toFixed(4)}`,
  );
  console.log(
    `  hit scores: ECE ${expectedCalibrationError(cv.hits).toFixed(4)}, log-loss ${logLoss(cv.hits).toFixed(4)} over ${cv.hits.length} hits\n`,
  );

  // Answer confidence, cross-validated by group on the cross-validated hits.
  const folds = groupFolds(
    queries.map((q) => q.group),
    FOLDS,
    3,
  );
  const answers: Outcome[] = [];
  /** The answer confidence of a question the KB does not cover (0 when nothing is offered). */
  const nearMiss: number[] = [];
  const offTopic: number[] = [];
  let citedRight = 0;
  let searchRight = 0;
  for (let f = 0; f < FOLDS; f++) {
    const train = cv.perQuery.filter(({ q }) => folds.get(q.group) !== f);
    const model = fitConfidence(answerSamples(train));
    /** The answer's confidence and the entry it cites first (none: nothing relevant). */
    const answer = (hits: KbHit[], text: string) => {
      const cited = relevantHits(hits, text)[0];
      if (!cited) return { p: 0, cited: undefined };
      const p = answerProbability(model, answerFeatures(hits, cited.entryId));
      return { p: Math.round(100 * p) / 100, cited: cited.entryId };
    };
    for (const { q, hits, uncoveredHits } of cv.perQuery.filter(
      ({ q }) => folds.get(q.group) === f,
    )) {
      if (!q.covered) {
        offTopic.push(answer(hits, q.text).p);
        continue;
      }
      const top = hits[0];
      if (top && q.relevant.has(top.entryId)) searchRight++;
      const { p, cited } = answer(hits, q.text);
      const right = cited !== undefined && q.relevant.has(cited);
      if (right) citedRight++;
      answers.push({ p, right });
      nearMiss.push(answer(uncoveredHits, q.text).p);
    }
  }
  const n = answers.length;
  console.log('Answers (the top hit cited; cross-validated by group):');
  console.log(
    `  cites a relevant entry first: ${pct(citedRight / n)} (search puts one first: ${pct(searchRight / n)})`,
  );
  console.log(
    `  confidence: ECE ${expectedCalibrationError(answers).toFixed(4)}, log-loss ${logLoss(answers).toFixed(4)}`,
  );
  console.log(
    '  answered at ≥ threshold: "near miss" = a covered question asked against the KB without its\n' +
      '  relevant entries; "off-topic" = the off-topic questions (all are wrong answers)',
  );
  console.log('  threshold  coverage  precision  near miss  off-topic');
  const thresholds = [0.5, 0.6, 0.7, 0.75, 0.8, 0.85, 0.9, 0.95];
  const share = (ps: number[], t: number) =>
    ps.length === 0 ? 0 : ps.filter((p) => p >= t).length / ps.length;
  precisionCoverage(answers, thresholds).forEach((c) => {
    console.log(
      `  ${String(Math.round(c.threshold * 100)).padStart(9)}  ${pct(c.coverage).padStart(8)}  ${pct(c.precision).padStart(9)}  ${pct(share(nearMiss, c.threshold)).padStart(9)}  ${pct(share(offTopic, c.threshold)).padStart(9)}`,
    );
  });

  // The shipped models: fitted on every query (calibration on inner-fold scores).
  const hybrid = fitStage(queries, 'hybrid');
  const lexicalOnly = fitStage(queries, 'lexical');
  const rerankModel: RerankModel = {
    depth: DEPTH,
    hybrid: roundStage(hybrid),
    lexicalOnly: roundStage(lexicalOnly),
  };
  const confidence = fitConfidence(answerSamples(cv.perQuery));
  const confidenceModel: ConfidenceModel = {
    ...confidence,
    weights: confidence.weights.map(round),
    bias: round(confidence.bias),
  };
  console.log(`\nrerank model: ${JSON.stringify(rerankModel)}`);
  console.log(`confidence model: ${JSON.stringify(confidenceModel)}`);
  if (opts['dry-run']) return;
  const write = (path: string, value: unknown) => {
    const target = outDir ? join(resolve(outDir), basename(path)) : resolve(REPO_ROOT, path);
    writeFileSync(target, `${JSON.stringify(value, null, 2)}\n`);
    console.log(`written: ${target}`);
  };
  write('services/knowledge/src/domain/rerank-model.json', rerankModel);
  write('services/answers/src/domain/confidence-model.json', confidenceModel);
  if (!outDir) console.log('rebuild (npm run build) for the services to use them');
}

function roundStage(stage: RerankStage): RerankStage {
  return {
    ranker: { features: stage.ranker.features, weights: stage.ranker.weights.map(round) },
    calibration: {
      bias: round(stage.calibration.bias),
      score: round(stage.calibration.score),
      gap: round(stage.calibration.gap),
    },
  };
}

main().catch((err: unknown) => {
  console.error(`fit-confidence: ${err instanceof Error ? (err.stack ?? err.message) : err}`);
  process.exit(1);
});
