// The digest's grouping threshold chosen by cross-validation over threads, in process:
//
//   npm run eval:digest-folds -- [--folds 2] [--seeds 10] [--questions 20]
//                                [--thresholds 0.4,0.5,0.6,0.7,0.8,0.9,1]
//                                [--data ../shared/data/stackfaq] [--queries queries-dev.jsonl]
//
// The threads (one question each) are split into folds. For each fold, the threshold with the
// best mean pairwise F1 on weeks drawn from the other folds' threads is chosen, then scored on
// weeks drawn from the held-out fold's threads only: the held-out figures are what the setting
// does on questions it was not chosen on. The default threshold (DIGEST_TOPIC_THRESHOLD_HASHED)
// is scored on the same held-out weeks beside it.
//
// The grouping is the digest's own (groupWeek), on knowledge's own search and embeddings run in
// this process (embedded index, hashed embeddings): the same hits and vectors the pipeline gets,
// without the services around them (`npm run eval:digest` runs the whole pipeline). Triage's
// automatic answers are not simulated, so a topic is shown with a KB answer by the floor alone.
import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import {
  digestSettings,
  groupWeek,
  loadDigestConfig,
  type GroupingSettings,
  type KbHit,
} from '@support-agent/digest/grouping';
import { fingerprintKey, searchEntries } from '@support-agent/knowledge/search';
import { openInProcessKb, type CorpusEntry, type EvalQuery } from '@support-agent/quality';
import { mulberry32 } from '@support-agent/shared';
import {
  drawWeek,
  readCollection,
  report,
  scoreWeek,
  shuffle,
  type DigestTopic,
  type WeekResult,
} from './lib/digest-weeks.js';

const { values: args } = parseArgs({
  options: {
    folds: { type: 'string', default: '2' },
    seeds: { type: 'string', default: '10' },
    questions: { type: 'string', default: '20' },
    thresholds: { type: 'string', default: '0.4,0.5,0.6,0.7,0.8,0.9,1' },
    data: { type: 'string', default: resolve('../shared/data/stackfaq') },
    queries: { type: 'string', default: 'queries-dev.jsonl' },
  },
});
const FOLDS = Number(args.folds);
const SEEDS = Number(args.seeds);
const QUESTIONS = Number(args.questions);
const THRESHOLDS = args.thresholds.split(',').map(Number);
const ORG = 'folds';

type Grouper = (tickets: EvalQuery[], threshold: number) => Promise<DigestTopic[]>;

/** The KB indexed in process; groupWeek over it with the digest's default settings. */
async function openGrouper(corpus: CorpusEntry[]) {
  const kb = await openInProcessKb(corpus, ORG);
  const { deps, embeddings } = kb;
  const logger = deps.logger;
  // Each question is searched and embedded once, whatever the number of weeks it is in.
  const hits = new Map<string, Promise<KbHit[]>>();
  const ports = {
    logger,
    knowledge: {
      search: (orgId: string, query: string, limit: number) => {
        const key = `${limit}\n${query}`;
        if (!hits.has(key)) hits.set(key, searchEntries(deps, { orgId, query, limit }));
        return hits.get(key)!;
      },
    },
    embedder: {
      embed: async (texts: string[]) => ({
        vectors: await embeddings.embedTexts(texts),
        fingerprint: fingerprintKey(embeddings.fingerprint),
      }),
    },
  };
  const defaults: GroupingSettings = digestSettings(loadDigestConfig({ EMBEDDED: 'true' }));
  const group: Grouper = async (tickets, threshold) => {
    const week = tickets.map((q, i) => ({
      ticketId: i + 1,
      content: q.text,
      createdAt: new Date(0),
      category: null,
      status: 'open',
      answered: false,
      aiSummary: null,
      aiAnswer: null,
    }));
    const settings = {
      ...defaults,
      thresholds: { ...defaults.thresholds, override: threshold },
    };
    const { topics } = await groupWeek(ports, settings, ORG, week);
    return topics.map((t, i) => ({
      id: String(i),
      title: '',
      answered: t.anchor !== undefined,
      tickets: t.size,
      answer: t.anchor ? { kind: 'kb', kb_entry_id: t.anchor.best.entryId } : null,
      ticket_ids: t.questions.flatMap((q) => q.tickets.map((x) => x.ticketId)),
    }));
  };
  return { group, defaultThreshold: defaults.thresholds.hashed, close: () => kb.close() };
}

async function weeks(
  group: Grouper,
  corpus: CorpusEntry[],
  byThread: Map<string, EvalQuery[]>,
  threshold: number,
  firstSeed: number,
): Promise<WeekResult[]> {
  const questions = Math.min(QUESTIONS, byThread.size);
  const out: WeekResult[] = [];
  for (let seed = firstSeed; seed < firstSeed + SEEDS; seed++) {
    const { tickets } = drawWeek(byThread, seed, questions, 0);
    const threadOf = new Map(tickets.map((q, i) => [i + 1, q.thread_id]));
    out.push(scoreWeek(await group(tickets, threshold), threadOf, corpus, new Set()));
  }
  return out;
}

const meanF1 = (results: WeekResult[]) =>
  results.reduce((s, r) => s + r.f1, 0) / Math.max(1, results.length);

async function main(): Promise<void> {
  const { corpus, byThread } = readCollection(args.data, args.queries);
  // Folds by thread, in a seeded random order so neighbouring ids do not share a fold.
  const threads = shuffle([...byThread.keys()].sort(), mulberry32(FOLDS));
  const foldOf = new Map(threads.map((t, i) => [t, i % FOLDS]));
  const subset = (keep: (fold: number) => boolean) =>
    new Map([...byThread].filter(([t]) => keep(foldOf.get(t)!)));
  const { group, defaultThreshold, close } = await openGrouper(corpus);
  try {
    console.log(
      `digest grouping, ${FOLDS} folds over ${byThread.size} threads of ${args.data}; ` +
        `${SEEDS} weeks of up to ${QUESTIONS} questions per fold and threshold`,
    );
    const chosenHeldOut: WeekResult[] = [];
    const defaultHeldOut: WeekResult[] = [];
    for (let fold = 0; fold < FOLDS; fold++) {
      const train = subset((f) => f !== fold);
      const test = subset((f) => f === fold);
      let chosen = THRESHOLDS[0]!;
      let best = -1;
      const curve: string[] = [];
      for (const t of THRESHOLDS) {
        const f1 = meanF1(await weeks(group, corpus, train, t, 1));
        curve.push(`${t}: ${f1.toFixed(3)}`);
        if (f1 > best + 1e-9) [best, chosen] = [f1, t];
      }
      console.log(`\nfold ${fold + 1}: training F1 by threshold ${curve.join(', ')}`);
      const held = await weeks(group, corpus, test, chosen, 1_001);
      chosenHeldOut.push(...held);
      defaultHeldOut.push(...(await weeks(group, corpus, test, defaultThreshold, 1_001)));
      report(`fold ${fold + 1} held out (${test.size} threads), threshold ${chosen}`, held);
    }
    report('all folds held out, threshold chosen on the other folds', chosenHeldOut);
    report(`all folds held out, default threshold ${defaultThreshold}`, defaultHeldOut);
  } finally {
    await close();
  }
}

await main();
