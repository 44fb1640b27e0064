// One contract for both vector-index adapters, driven through the domain use cases:
// the embedded index (in process, journal on disk) and the Qdrant adapter — against
// a real Qdrant when QDRANT_URL is set, otherwise against the in-memory stand-in that
// validates every request and response against Qdrant's OpenAPI document.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { AppError } from '@support-agent/shared';
import { EmbeddedCatalog, EmbeddedIndex } from '../src/data-access/embedded-index/index.js';
import { HashedEmbeddings } from '../src/data-access/hashed-embeddings.js';
import { createQdrantClient, QdrantCatalog, QdrantIndex } from '../src/data-access/qdrant-index.js';
import { collectionName } from '../src/domain/fingerprint.js';
import { profileFromText } from '../src/domain/entry-profile.js';
import { termsOf } from '../src/domain/question-vocabulary.js';
import { pointIdOf } from '../src/domain/hashing.js';
import type { EmbeddingProvider, IndexCatalog, KnowledgeIndex } from '../src/domain/ports.js';
import { reindex } from '../src/domain/reindex.js';
import { dot, queryTerms } from '../src/domain/scoring.js';
import { searchEntries, type KnowledgeDeps } from '../src/domain/search.js';
import { countEntries, deleteEntries, upsertEntries } from '../src/domain/upsert.js';
import { ENTRIES, randomSuffix, silentLogger, tempDir } from './support/fixtures.js';
import { QdrantStandIn, requestsWithoutOrgFilter } from '../../../test/support/qdrant-standin.js';

interface Backend {
  /** Opens (or reopens) the collection of an embedding provider. */
  open(embeddings: EmbeddingProvider): Promise<KnowledgeIndex>;
  catalog: IndexCatalog;
  teardown(): Promise<void>;
}

interface AdapterHarness {
  name: string;
  /**
   * How far a candidate's cosine may be from the dot product computed here: the embedded
   * index sums the same float32 values in doubles (exactly equal); Qdrant computes it itself,
   * in float32.
   */
  cosineTolerance: number;
  setup(): Promise<Backend>;
  /** Set for the stand-in: checks of the HTTP traffic itself. */
  standIn?: () => QdrantStandIn;
}

const PREFIX = `kbtest-${randomSuffix()}`;

const embeddedHarness: AdapterHarness = {
  name: 'embedded index',
  cosineTolerance: 0,
  async setup() {
    const dir = tempDir('kb-contract-');
    const opened: KnowledgeIndex[] = [];
    return {
      async open(embeddings) {
        const index = new EmbeddedIndex({
          dir: dir.path,
          collection: collectionName(PREFIX, embeddings.fingerprint),
          dimensions: embeddings.fingerprint.dimensions,
        });
        await index.init();
        opened.push(index);
        return index;
      },
      catalog: new EmbeddedCatalog(dir.path, PREFIX),
      async teardown() {
        for (const i of opened) await i.close();
        dir.remove();
      },
    };
  },
};

let standIn: QdrantStandIn | undefined;
const qdrantHarness: AdapterHarness = {
  name: process.env.QDRANT_URL
    ? `qdrant index (real server ${process.env.QDRANT_URL})`
    : 'qdrant index (OpenAPI-validating stand-in)',
  cosineTolerance: 1e-6,
  async setup() {
    let url = process.env.QDRANT_URL;
    if (!url) {
      standIn = await QdrantStandIn.start();
      url = standIn.url;
    }
    const client = createQdrantClient({
      url,
      apiKey: process.env.QDRANT_API_KEY,
      timeoutMs: 10_000,
    });
    const catalog = new QdrantCatalog(client, PREFIX);
    return {
      async open(embeddings) {
        const index = new QdrantIndex({
          client,
          collection: collectionName(PREFIX, embeddings.fingerprint),
          fingerprint: embeddings.fingerprint,
        });
        await index.init();
        return index;
      },
      catalog,
      async teardown() {
        for (const c of await catalog.list()) await catalog.drop(c);
        await standIn?.stop();
      },
    };
  },
  ...(process.env.QDRANT_URL ? {} : { standIn: () => standIn! }),
};

/** A provider whose query embeddings are down, to exercise the lexical fallback. */
class QueryEmbeddingsDown implements EmbeddingProvider {
  constructor(private readonly inner: HashedEmbeddings) {}
  get fingerprint() {
    return this.inner.fingerprint;
  }
  get cosineRange() {
    return this.inner.cosineRange;
  }
  embedDocuments(entries: Parameters<EmbeddingProvider['embedDocuments']>[0]) {
    return this.inner.embedDocuments(entries);
  }
  async embedQuery(): Promise<Float32Array> {
    throw new AppError('service_unavailable', 'embedding provider down');
  }
  embedTexts(texts: string[]) {
    return this.inner.embedTexts(texts);
  }
}

const rankingsByAdapter = new Map<string, { entryId: string; score: number }[][]>();
const PARITY_QUERIES = [
  'I forgot my password, how can I reset it?',
  'export tickets as csv',
  'how many api requests per minute',
];

for (const harness of [embeddedHarness, qdrantHarness]) {
  describe(`KB index contract: ${harness.name}`, () => {
    const embeddings = new HashedEmbeddings();
    let backend: Backend;
    let index: KnowledgeIndex;
    let deps: KnowledgeDeps;
    const org = `acme-${randomSuffix()}`;
    const other = `globex-${randomSuffix()}`;

    before(async () => {
      backend = await harness.setup();
      index = await backend.open(embeddings);
      deps = { index, embeddings, logger: silentLogger, now: Date.now };
    });
    after(async () => {
      await backend.teardown();
    });

    it('when the organization has no entries, then search returns nothing and count is 0', async () => {
      assert.deepEqual(await searchEntries(deps, { orgId: org, query: 'reset my password' }), []);
      assert.equal(await countEntries(deps, org), 0);
    });

    it('when new entries are upserted, then each counts as inserted and count reflects them', async () => {
      const res = await upsertEntries(deps, org, ENTRIES);
      assert.deepEqual(res, { inserted: ENTRIES.length, updated: 0, failed: [] });
      assert.equal(await countEntries(deps, org), ENTRIES.length);
    });

    it('when a paraphrase is searched, then the entry that answers it comes first', async () => {
      const results = await searchEntries(deps, {
        orgId: org,
        query: 'I forgot my password, how can I reset it?',
      });
      assert.equal(results[0]?.entryId, 'reset-password');
      assert.ok(results[0]!.score > 0.5, `top score ${results[0]!.score}`);
      assert.equal(results[0]!.question, ENTRIES[0]!.question);
      assert.equal(results[0]!.answer, ENTRIES[0]!.answer);
    });

    it('when the query is an entry’s own question, then that entry scores near 1', async () => {
      const results = await searchEntries(deps, {
        orgId: org,
        query: 'Where can I download my invoices?',
      });
      assert.equal(results[0]?.entryId, 'billing-invoices');
      assert.ok(results[0]!.score >= 0.9, `top score ${results[0]!.score}`);
    });

    it('when several entries match, then scores lie in [0,1] and are sorted, at most 5 by default', async () => {
      const results = await searchEntries(deps, {
        orgId: org,
        query: 'account security settings, billing, members and api keys',
      });
      assert.ok(results.length >= 3, `${results.length} results`);
      assert.ok(results.length <= 5, 'default limit 5');
      for (const r of results)
        assert.ok(r.score >= 0 && r.score <= 1, `score ${r.score} out of [0,1]`);
      for (let i = 1; i < results.length; i++) {
        const [a, b] = [results[i - 1]!, results[i]!];
        assert.ok(
          a.score > b.score || (a.score === b.score && a.entryId < b.entryId),
          'score desc, then entry id',
        );
      }
    });

    it('when the query has nothing to do with the KB, then nothing scores high', async () => {
      const results = await searchEntries(deps, {
        orgId: org,
        query: 'migration patterns of zebras in the Serengeti',
      });
      for (const r of results) assert.ok(r.score < 0.2, `${r.entryId} scored ${r.score}`);
    });

    it('when a limit is given, then at most that many results come back', async () => {
      const results = await searchEntries(deps, {
        orgId: org,
        query: 'settings account security billing',
        limit: 2,
      });
      assert.equal(results.length, 2);
    });

    it('when searches run at once, then each gets what it gets alone', async () => {
      // The search path reuses typed arrays between calls for the stretches that run without
      // yielding; searches interleaved at their awaits must not see each other's.
      const queries = [
        'I forgot my password, how can I reset it?',
        'Where can I download my invoices?',
        'account security settings, billing, members and api keys',
        'api keys',
        'how do I invite a member to the team',
        'cancel subscription',
      ];
      const alone = [];
      for (const q of queries)
        alone.push(await searchEntries(deps, { orgId: org, query: q, limit: 10 }));
      const together = await Promise.all(
        [...queries, ...queries].map((q) =>
          searchEntries(deps, { orgId: org, query: q, limit: 10 }),
        ),
      );
      assert.ok(alone.every((r) => r.length > 0));
      assert.deepEqual(together, [...alone, ...alone]);
    });

    it('when entries are upserted again, then they count as updated and changed text is what search finds', async () => {
      const changed = {
        ...ENTRIES[1]!,
        answer: 'Yes. Choose Export in the Tickets view, then pick CSV or JSON Lines.',
      };
      const res = await upsertEntries(deps, org, [ENTRIES[0]!, changed]);
      assert.deepEqual(res, { inserted: 0, updated: 2, failed: [] });
      assert.equal(await countEntries(deps, org), ENTRIES.length);
      const results = await searchEntries(deps, {
        orgId: org,
        query: 'export tickets as JSON Lines',
      });
      assert.equal(results[0]?.entryId, 'export-csv');
      assert.equal(results[0]?.answer, changed.answer);
    });

    it('when a batch has invalid and repeated entries, then they fail with their index and the rest are written', async () => {
      const res = await upsertEntries(deps, org, [
        {
          id: 'ok-1',
          question: 'Is there a mobile app?',
          answer: 'Yes, for iOS and Android.',
          tags: [],
        },
        { id: 'bad', question: '   ', answer: 'No question.', tags: [] },
        { id: 'ok-1', question: 'Duplicate id', answer: 'Second occurrence.', tags: [] },
      ]);
      assert.equal(res.inserted, 1);
      assert.deepEqual(
        res.failed.map((f) => f.index),
        [1, 2],
      );
      assert.match(res.failed[0]!.message, /question/);
      assert.match(res.failed[1]!.message, /duplicate/);
      assert.equal(await deleteEntries(deps, org, ['ok-1']), 1);
    });

    it('when two entries differ only by id, then they tie and are ordered by entry id', async () => {
      const twin = {
        question: 'Does the product support dark mode?',
        answer: 'Dark mode follows your system setting.',
        tags: [],
      };
      await upsertEntries(deps, org, [
        { id: 'twin-b', ...twin },
        { id: 'twin-a', ...twin },
      ]);
      const results = await searchEntries(deps, {
        orgId: org,
        query: 'dark mode support',
        limit: 3,
      });
      assert.deepEqual(
        results.slice(0, 2).map((r) => r.entryId),
        ['twin-a', 'twin-b'],
      );
      assert.equal(results[0]!.score, results[1]!.score);
      assert.equal(await deleteEntries(deps, org, ['twin-a', 'twin-b']), 2);
    });

    it('when another organization holds entries, then search, count and delete never cross organizations', async () => {
      await upsertEntries(deps, other, [
        {
          id: 'reset-password',
          question: 'How do I reset my password?',
          answer: 'Globex: ask your administrator.',
          tags: [],
        },
        {
          id: 'globex-only',
          question: 'Where is the Globex office?',
          answer: 'In Cypress Creek.',
          tags: [],
        },
      ]);
      assert.equal(await countEntries(deps, other), 2);
      assert.equal(await countEntries(deps, org), ENTRIES.length);

      const ours = await searchEntries(deps, { orgId: org, query: 'reset password', limit: 20 });
      assert.ok(ours.every((r) => !r.answer.startsWith('Globex')));
      assert.ok(!ours.some((r) => r.entryId === 'globex-only'));
      const theirs = await searchEntries(deps, {
        orgId: other,
        query: 'reset password',
        limit: 20,
      });
      assert.equal(theirs[0]?.answer, 'Globex: ask your administrator.');
      assert.ok(theirs.every((r) => ['reset-password', 'globex-only'].includes(r.entryId)));

      assert.equal(
        await deleteEntries(deps, other, ['export-csv']),
        0,
        'cannot delete another org’s entry',
      );
      assert.equal(await countEntries(deps, org), ENTRIES.length);
      assert.deepEqual(
        await searchEntries(deps, { orgId: `nobody-${randomSuffix()}`, query: 'reset password' }),
        [],
      );
    });

    it('when entries are deleted, then search and count no longer see them and unknown ids count 0', async () => {
      assert.equal(
        await deleteEntries(deps, other, ['globex-only', 'never-existed', 'globex-only']),
        1,
      );
      assert.equal(await countEntries(deps, other), 1);
      const results = await searchEntries(deps, {
        orgId: other,
        query: 'Globex office Cypress Creek',
        limit: 20,
      });
      assert.ok(!results.some((r) => r.entryId === 'globex-only'));
      assert.equal(await deleteEntries(deps, other, ['never-existed']), 0);
    });

    it('when query embeddings are unavailable, then search falls back to lexical scoring', async () => {
      const degraded: KnowledgeDeps = { ...deps, embeddings: new QueryEmbeddingsDown(embeddings) };
      const results = await searchEntries(degraded, {
        orgId: org,
        query: 'download invoices as PDF',
      });
      assert.equal(results[0]?.entryId, 'billing-invoices');
      assert.ok(results[0]!.score > 0.5);
    });

    it('when an organization is scrolled, then every entry comes back once with its source text', async () => {
      const seen: string[] = [];
      let after: string | undefined;
      do {
        const page = await index.scroll(org, after, 3);
        for (const e of page.entries) {
          seen.push(e.id);
          const source = ENTRIES.find((x) => x.id === e.id)!;
          assert.equal(e.question, source.question);
          assert.deepEqual(e.tags, source.tags);
        }
        after = page.next;
      } while (after !== undefined);
      assert.deepEqual([...seen].sort(), ENTRIES.map((e) => e.id).sort());
      const orgs = await index.listOrgs();
      assert.ok(orgs.includes(org) && orgs.includes(other));
    });

    it('when the index is reopened, then entries and their text are still there', async () => {
      await index.close();
      index = await backend.open(embeddings);
      deps = { ...deps, index };
      assert.equal(await countEntries(deps, org), ENTRIES.length);
      const results = await searchEntries(deps, { orgId: org, query: 'how do I invite teammates' });
      assert.equal(results[0]?.entryId, 'invite-teammates');
    });

    it('when candidates come back, then the profile the adapter keeps for each equals the one derived from its text', async () => {
      const query = 'reset password invoices teammates';
      const terms = queryTerms(query);
      const dense = await embeddings.embedQuery(query);
      const set = await index.candidates({ orgId: org, dense, terms, limit: 50 });
      assert.ok(set.size >= 3, `${set.size} candidates`);
      for (let k = 0; k < set.size; k++) {
        const c = set.candidate(k);
        assert.equal(c.entry.id, set.idOf(k));
        const stored = c.profile;
        assert.ok(stored, `${c.entry.id} comes with its profile`);
        const derived = profileFromText(c.entry);
        assert.equal(stored.questionKey, derived.questionKey);
        assert.deepEqual(termsOf(stored.questionTerms), termsOf(derived.questionTerms));
        assert.equal(stored.questionGramNorm2, derived.questionGramNorm2);
        terms.forEach((t, j) =>
          assert.equal(stored.inAnswer(t, j), derived.inAnswer(t, j), t.term),
        );
        const [vector] = await embeddings.embedDocuments([c.entry]);
        const exact = dot(dense, vector!);
        assert.ok(
          Math.abs(c.cosine! - exact) <= harness.cosineTolerance,
          `${c.entry.id} cosine ${c.cosine} vs ${exact}`,
        );
      }
    });

    it('when the same queries run, then the ranking and scores are recorded for the cross-adapter check', async () => {
      const rankings = [];
      for (const query of PARITY_QUERIES) {
        rankings.push(
          (await searchEntries(deps, { orgId: org, query, limit: 5 })).map((r) => ({
            entryId: r.entryId,
            score: r.score,
          })),
        );
      }
      rankingsByAdapter.set(harness.name, rankings);
      assert.equal(rankings.length, PARITY_QUERIES.length);
    });

    it('when the embedding fingerprint changes, then a new collection is used and re-indexing moves every entry into it', async () => {
      const smaller = new HashedEmbeddings(256);
      const target = await backend.open(smaller);
      assert.notEqual(target.collection, index.collection);
      assert.match(target.collection, /hashed.*256$/);
      const targetDeps: KnowledgeDeps = {
        index: target,
        embeddings: smaller,
        logger: silentLogger,
        now: Date.now,
      };
      assert.equal(
        await countEntries(targetDeps, org),
        0,
        'vectors of different fingerprints never mix',
      );

      // An entry already written to the new collection more recently must survive.
      await upsertEntries(targetDeps, org, [
        { ...ENTRIES[2]!, answer: 'Newer answer written after the switch.' },
      ]);
      const reports = await reindex({
        catalog: backend.catalog,
        target,
        embeddings: smaller,
        logger: silentLogger,
      });
      const fromOld = reports.find((r) => r.collection === index.collection);
      assert.ok(fromOld, `reindex read ${index.collection}`);
      assert.equal(fromOld.skipped, 1);
      assert.equal(await countEntries(targetDeps, org), ENTRIES.length);
      assert.equal(await countEntries(targetDeps, other), 1);
      const results = await searchEntries(targetDeps, { orgId: org, query: 'delete my account' });
      assert.equal(results[0]?.entryId, 'delete-account');
      assert.equal(results[0]?.answer, 'Newer answer written after the switch.');
      await target.close();
    });

    if (harness.standIn) {
      const getStandIn = harness.standIn;
      it('when the adapter talks to Qdrant, then every request and response matches Qdrant’s OpenAPI document', () => {
        const s = getStandIn();
        assert.ok(s.requests.length > 20, 'traffic was recorded');
        assert.deepEqual(s.violations, []);
      });

      it('when points are read, counted or deleted, then every request carries the org_id filter', () => {
        const s = getStandIn();
        const ops = new Set(
          s.requests
            .map((r) => /\/points\/(query|scroll|count|delete)$/.exec(r.path)?.[1])
            .filter(Boolean),
        );
        assert.deepEqual([...ops].sort(), ['count', 'delete', 'query', 'scroll']);
        assert.deepEqual(requestsWithoutOrgFilter(s.requests), []);
        const queries = s.requests.filter((r) => r.path.endsWith('/points/query'));
        type Query = {
          prefetch?: { prefetch?: unknown[]; query?: unknown };
          query?: unknown;
          using?: string;
          with_vector?: unknown;
        };
        const hybrid = queries.find((r) => (r.body as Query).prefetch?.prefetch?.length === 2);
        assert.ok(hybrid, 'a hybrid query with two nested prefetches was sent');
        const body = hybrid.body as Query;
        assert.deepEqual(body.prefetch!.query, { fusion: 'rrf' }, 'the prefetches are fused');
        assert.ok(Array.isArray(body.query) && body.using === 'dense', 'then rescored densely');
        assert.deepEqual(body.with_vector, ['sparse'], 'dense vectors are not fetched');
      });

      it('when the collection is created, then it has named dense and sparse vectors, int8 scalar quantization and a tenant org_id index', () => {
        const s = getStandIn();
        const config = s.collectionConfig(index.collection)!;
        assert.deepEqual(config.dense.get('dense'), { size: 512, distance: 'Cosine' });
        assert.deepEqual(config.sparse.get('sparse'), { modifier: 'idf' });
        assert.deepEqual(config.quantization, {
          scalar: { type: 'int8', quantile: 0.99, always_ram: true },
        });
        assert.deepEqual(s.payloadIndexes(index.collection)?.get('org_id'), {
          type: 'keyword',
          is_tenant: true,
        });
        const upsert = s.requests.find(
          (r) => r.method === 'PUT' && r.path.endsWith(`${index.collection}/points`),
        );
        assert.equal(upsert?.query.wait, 'true');
        const ids = ((upsert!.body as { points: { id: string }[] }).points ?? []).map((p) => p.id);
        assert.ok(ids.includes(pointIdOf(org, 'reset-password')), 'point id = UUIDv5(org:entry)');
      });

      it('when a request does not match the OpenAPI document, then the stand-in rejects and records it', async () => {
        const s = getStandIn();
        const before = s.violations.length;
        const res = await fetch(`${s.url}/collections/${index.collection}/points/query`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ query: { fusion: 'weighted' }, limit: 0 }),
        });
        assert.equal(res.status, 400);
        const unknown = await fetch(`${s.url}/no/such/path`);
        assert.equal(unknown.status, 404);
        assert.equal(s.violations.length, before + 2);
        s.violations.splice(before);
      });
    }
  });
}

describe('KB index contract: both adapters', () => {
  it('when both adapters hold the same entries, then they rank alike with the same scores', () => {
    const [a, b] = [...rankingsByAdapter.values()];
    assert.ok(a && b, 'both adapters ran');
    for (let q = 0; q < PARITY_QUERIES.length; q++) {
      assert.deepEqual(
        a[q]!.map((r) => r.entryId),
        b[q]!.map((r) => r.entryId),
        PARITY_QUERIES[q],
      );
      a[q]!.forEach((r, i) =>
        assert.ok(
          Math.abs(r.score - b[q]![i]!.score) < 1e-4,
          `${r.entryId}: ${r.score} vs ${b[q]![i]!.score}`,
        ),
      );
    }
  });
});
