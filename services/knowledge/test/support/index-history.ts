// A fixed history of writes to an embedded index collection, through the KnowledgeIndex
// port only (no embeddings, no domain scoring: the bytes written depend on the adapter
// alone). test/fixtures/embedded-index-v1 holds what the pre-split adapter wrote for it;
// embedded-index-format.test.ts checks that today's adapter loads those files and writes
// the very same bytes.
import { createHash } from 'node:crypto';
import type { IndexedEntry, KnowledgeIndex, StoredEntry } from '../../src/domain/ports.js';

export const HISTORY_COLLECTION = 'kb_v1_fixture_fixture-v1_8';
export const HISTORY_DIMENSIONS = 8;
/** Small segments, so the history spans several of them. */
export const HISTORY_SEGMENT_RECORDS = 3;
const T0 = Date.UTC(2026, 0, 1);

/** Opens (init included) the collection with these extra options. */
export type OpenIndex = (options: {
  segmentRecords: number;
  compactionSlack?: number;
}) => Promise<KnowledgeIndex>;

interface Version {
  id: string;
  question: string;
  answer: string;
  tags: string[];
  /** Seed of the vectors. */
  seed: number;
  /** Set for a content hash in another format than sha256 hex (kept as written). */
  hash?: string;
}

function dense(seed: number): Float32Array {
  const v = Float32Array.from({ length: HISTORY_DIMENSIONS }, (_, j) =>
    Math.sin(seed * 7.1 + j * 1.3),
  );
  const norm = Math.hypot(...v);
  return v.map((x) => x / norm);
}

/** Term ids shared across entries (1–3) plus two of the entry's own. */
function sparse(seed: number): { indices: number[]; values: number[] } {
  const indices = [1 + (seed % 3), 100 + seed, 4_000_000_000 - seed].sort((a, b) => a - b);
  return { indices, values: indices.map((_, i) => 0.5 + i * 0.25 + seed / 100) };
}

let clock = 0;
function indexed(v: Version): IndexedEntry {
  const contentHash =
    v.hash ??
    createHash('sha256')
      .update(`${v.question}\n${v.answer}\n${v.tags.join(',')}`)
      .digest('hex');
  return {
    id: v.id,
    question: v.question,
    answer: v.answer,
    tags: v.tags,
    updatedAt: T0 + ++clock * 1000,
    contentHash,
    dense: dense(v.seed),
    sparse: sparse(v.seed),
    terms: [],
  };
}

const acme = (n: number, version = 1, extra: Partial<Version> = {}): Version => ({
  id: `a${n}`,
  question: `How do I configure widget ${n}?`,
  answer: `Open panel ${n} and set option ${version}.`,
  tags: n % 2 ? ['widgets'] : [],
  seed: n * 10 + version,
  ...extra,
});

/**
 * Writes the history: (1) several segments, replaced and deleted entries; (2) a start-up
 * compaction into generation 2, then more writes (multi-byte text, a non-hex hash).
 * Returns the entries that must be live after the last phase written, by organization.
 */
export async function writeHistory(
  open: OpenIndex,
  phases: 1 | 2 = 2,
): Promise<Map<string, StoredEntry[]>> {
  clock = 0;
  const live = new Map<string, Map<string, StoredEntry>>();
  const put = async (index: KnowledgeIndex, org: string, versions: Version[]) => {
    const entries = versions.map(indexed);
    await index.upsert(org, entries);
    const byId = live.get(org) ?? new Map<string, StoredEntry>();
    for (const { dense: _d, sparse: _s, terms: _t, ...stored } of entries)
      byId.set(stored.id, stored);
    live.set(org, byId);
  };
  const del = async (index: KnowledgeIndex, org: string, ids: string[]) => {
    await index.delete(org, ids);
    for (const id of ids) live.get(org)?.delete(id);
  };

  const first = await open({ segmentRecords: HISTORY_SEGMENT_RECORDS });
  await put(
    first,
    'acme',
    [1, 2, 3, 4, 5].map((n) => acme(n)),
  );
  await put(first, 'acme', [acme(2, 2)]);
  await del(first, 'acme', ['a4', 'missing']);
  await put(first, 'globex', [
    { id: 'g1', question: 'Where are invoices?', answer: 'Under Billing.', tags: [], seed: 91 },
    { id: 'g2', question: 'Who can export?', answer: 'Admins only.', tags: ['x'], seed: 92 },
  ]);
  for (let v = 2; v <= 5; v++) await put(first, 'acme', [acme(1, v)]);
  await first.close();
  const result = () => new Map([...live].map(([org, byId]) => [org, [...byId.values()]]));
  if (phases === 1) return result();

  // 13 records, 6 live: more than twice the live entries, so start-up compacts.
  const second = await open({ segmentRecords: HISTORY_SEGMENT_RECORDS, compactionSlack: 0 });
  await put(second, 'acme', [
    acme(6, 1, { question: 'Wie stelle ich das Widget „6“ ein? 日本語 ✓', hash: 'md5:0123' }),
  ]);
  await put(second, 'globex', [
    {
      id: 'g1',
      question: 'Where are invoices?',
      answer: 'Billing → Invoices.',
      tags: [],
      seed: 93,
    },
  ]);
  await del(second, 'globex', ['g2']);
  await second.close();
  return result();
}

/** The dense vector and sparse vector the history wrote for an entry version's seed. */
export const historyVectors = { dense, sparse };
