// CPU per search of two (or more) versions of the knowledge service's search, side by side in
// one process: each source tree builds its own embedded index of the same entries, the same
// queries run on each, the versions taking turns every 50 queries (SEARCH_AB_CHUNK), and CPU
// time (process.cpuUsage) per search is compared: per round, and as the median ratio of the
// chunks run side by side, which a drifting machine speed disturbs least. Also checks the
// rankings: how many queries come back with the same entries in the same order, and the
// largest score difference. Not a test.
//
//   git archive <commit> services/knowledge packages bench | tar -x -C /tmp/base
//   ln -s "$PWD/node_modules" /tmp/base/node_modules
//   npx tsx services/knowledge/bench/search-ab.ts <synthetic|stackfaq> <entries> [queries=600]
//     [rounds=5] [tree…=/tmp/base .]
//
// `stackfaq`: StackFAQ's dev corpus (../shared/data/stackfaq) topped up with synthetic
// entries to the size asked for, and its 599 dev queries (quality is printed too).
// KB_INDEX_OPTIONS='{"quantizeAbove":0}' passes more EmbeddedIndex options to every tree.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { createLogger } from '@support-agent/shared';
import { entry, queryFor, random } from '../../../bench/synthetic-kb.js';
import { evaluateRankings, type Judgements, loadEvalCollection } from '@support-agent/quality';

interface Hit {
  entryId: string;
  score: number;
}

const [corpus = 'synthetic', sizeArg = '1000', queriesArg = '600', roundsArg = '5', ...trees] =
  process.argv.slice(2);
const size = Number(sizeArg);
const roots = (trees.length > 0 ? trees : ['/tmp/base', '.']).map((t) => resolve(t));
const logger = createLogger('search-ab', 'warn');

let entries: { id: string; question: string; answer: string; tags: string[] }[];
let queries: string[];
let labelled: { ids: { queryId: string; threadId: string }[]; judgements: Judgements } | undefined;
if (corpus === 'stackfaq') {
  const dir = process.env.STACKFAQ_DIR ?? resolve('../shared/data/stackfaq');
  const c = loadEvalCollection(
    join(dir, 'corpus.jsonl'),
    join(dir, 'queries-dev.jsonl'),
    join(dir, 'qrels-dev.jsonl'),
  );
  entries = c.corpus.map((x) => ({
    id: x.faq_id,
    question: x.question,
    answer: x.answer,
    tags: [],
  }));
  for (let i = entries.length; i < size; i++) entries.push({ ...entry(i), id: `filler${i}` });
  queries = c.queries.map((q) => q.text);
  labelled = {
    ids: c.queries.map((q) => ({ queryId: q.query_id, threadId: q.thread_id })),
    judgements: c.judgements,
  };
} else {
  entries = Array.from({ length: size }, (_, i) => entry(i));
  queries = Array.from({ length: Number(queriesArg) }, () =>
    queryFor(entries[Math.floor(random() * entries.length)]!.question),
  );
}

const versions: {
  root: string;
  search: (q: string) => Promise<Hit[]>;
  close: () => Promise<void>;
}[] = [];
for (const root of roots) {
  const src = join(root, 'services/knowledge/src');
  const { EmbeddedIndex } = await import(join(src, 'data-access/embedded-index/index.ts'));
  const { HashedEmbeddings } = await import(join(src, 'data-access/hashed-embeddings.ts'));
  const { collectionName } = await import(join(src, 'domain/fingerprint.ts'));
  const { searchEntries } = await import(join(src, 'domain/search.ts'));
  const { upsertEntries } = await import(join(src, 'domain/upsert.ts'));
  const dir = mkdtempSync(join(tmpdir(), 'kb-search-ab-'));
  const embeddings = new HashedEmbeddings();
  const index = new EmbeddedIndex({
    dir,
    collection: collectionName('ab', embeddings.fingerprint),
    dimensions: embeddings.dimensions,
    logger,
    ...(JSON.parse(process.env.KB_INDEX_OPTIONS ?? '{}') as object),
  });
  await index.init();
  const deps = { index, embeddings, logger, now: Date.now };
  const started = performance.now();
  for (let i = 0; i < entries.length; i += 1000)
    await upsertEntries(deps, 'ab', entries.slice(i, i + 1000));
  console.log(`${root}: ${size} entries in ${((performance.now() - started) / 1000).toFixed(1)} s`);
  versions.push({
    root,
    search: (query) => searchEntries(deps, { orgId: 'ab', query, limit: 5 }) as Promise<Hit[]>,
    close: async () => {
      await index.close();
      rmSync(dir, { recursive: true, force: true });
    },
  });
}

const results: Hit[][][] = [];
for (const v of versions) {
  const out: Hit[][] = [];
  for (const q of queries) out.push(await v.search(q));
  results.push(out);
}
for (let j = 1; j < versions.length; j++) {
  let same = 0;
  let maxDiff = 0;
  results[0]!.forEach((a, i) => {
    const b = results[j]![i]!;
    if (a.map((h) => h.entryId).join('\n') === b.map((h) => h.entryId).join('\n')) same++;
    for (let k = 0; k < Math.min(a.length, b.length); k++)
      maxDiff = Math.max(maxDiff, Math.abs(a[k]!.score - b[k]!.score));
  });
  console.log(
    `${versions[j]!.root} vs ${versions[0]!.root}: same ranking for ${same}/${queries.length} queries, largest score difference ${maxDiff.toExponential(1)}`,
  );
}
if (labelled) {
  versions.forEach((v, j) => {
    const m = evaluateRankings(
      labelled!.ids.map((q, i) => ({ ...q, ranking: results[j]![i]!.map((h) => h.entryId) })),
      labelled!.judgements,
      5,
    );
    console.log(`${v.root}: ${JSON.stringify(m)}`);
  });
}

// Each round runs the queries in chunks of CHUNK, the versions taking turns chunk by chunk
// (which goes first alternates), so both see the same moments of a machine whose speed drifts;
// the ratio of each pair of chunks is kept, and its median is the comparison printed.
const CHUNK = Number(process.env.SEARCH_AB_CHUNK ?? 50);
const cpu: number[][] = versions.map(() => []);
const chunkCpu: number[][] = versions.map(() => []);
for (let round = 0; round < Number(roundsArg); round++) {
  const spent = versions.map(() => 0);
  for (let from = 0, turn = 0; from < queries.length; from += CHUNK, turn++) {
    const chunk = queries.slice(from, from + CHUNK);
    for (let k = 0; k < versions.length; k++) {
      const j = (k + round + turn) % versions.length;
      const before = process.cpuUsage();
      for (const q of chunk) await versions[j]!.search(q);
      const used = process.cpuUsage(before);
      spent[j]! += used.user + used.system;
      chunkCpu[j]!.push((used.user + used.system) / chunk.length);
    }
  }
  spent.forEach((us, j) => cpu[j]!.push(us / 1000 / queries.length));
}
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
versions.forEach((v, j) =>
  console.log(
    `${v.root} (${corpus}, ${size} entries): CPU ms per search, median ${median(cpu[j]!).toFixed(3)}, least ${Math.min(...cpu[j]!).toFixed(3)} (rounds ${cpu[j]!.map((x) => x.toFixed(3)).join(' ')})`,
  ),
);
for (let j = 1; j < versions.length; j++) {
  const ratios = chunkCpu[j]!.map((x, i) => x / chunkCpu[0]![i]!);
  console.log(
    `${versions[j]!.root} / ${versions[0]!.root}: median of ${ratios.length} paired chunk ratios ${median(ratios).toFixed(3)}`,
  );
}
for (const v of versions) await v.close();
