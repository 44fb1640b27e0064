import { test } from 'node:test';
import assert from 'node:assert/strict';
import { appendFileSync, mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  JournaledStore,
  JsonlJournal,
  SegmentedJournal,
  type JournalLine,
  type SegmentLine,
} from '@support-agent/shared';

test('when records are appended, then a new journal on the same file replays them in order', () => {
  const path = join(mkdtempSync(join(tmpdir(), 'journal-')), 'j.jsonl');
  const j = new JsonlJournal<{ n: number }>(path);
  j.replay(() => undefined);
  j.append({ n: 1 });
  j.appendMany([{ n: 2 }, { n: 3 }]);
  j.close();
  const seen: number[] = [];
  new JsonlJournal<{ n: number }>(path).replay((r) => seen.push(r.n));
  assert.deepEqual(seen, [1, 2, 3]);
});

test('when a journal is rewritten, then it holds only the snapshot, appends follow it, and a restart replays both', () => {
  const dir = mkdtempSync(join(tmpdir(), 'journal-'));
  const path = join(dir, 'j.jsonl');
  const j = new JsonlJournal<{ n: number }>(path);
  j.replay(() => undefined);
  j.appendMany([{ n: 1 }, { n: 2 }, { n: 3 }]);
  j.rewrite([{ n: 6 }]);
  assert.equal(j.records, 1);
  const at = j.append({ n: 7 });
  j.close();
  assert.equal(readFileSync(path, 'utf8'), '{"n":6}\n{"n":7}\n');
  assert.deepEqual(at, { offset: 8, length: 7 });
  assert.deepEqual(readdirSync(dir), ['j.jsonl']);
  const seen: number[] = [];
  new JsonlJournal<{ n: number }>(path).replay((r) => seen.push(r.n));
  assert.deepEqual(seen, [6, 7]);
});

test('when a store is open on a directory, then a second one is refused until the first closes', async () => {
  class Counter extends JournaledStore<{ n: number }> {
    total = 0;
    constructor(dir: string) {
      super(dir, 'counter.jsonl', 'counter');
      this.journal.replay((r) => this.apply(r));
    }
    add(n: number): void {
      this.record({ n });
    }
    protected apply(r: { n: number }): void {
      this.total += r.n;
    }
  }
  const dir = mkdtempSync(join(tmpdir(), 'journaled-'));
  const first = new Counter(dir);
  first.add(2);
  first.add(3);
  assert.throws(() => new Counter(dir), /already open/);
  await first.close();
  const again = new Counter(dir);
  assert.equal(again.total, 5);
  await again.close();
});

test('when a crash tore the last line, then replay drops it and later appends and restarts stay readable', () => {
  const path = join(mkdtempSync(join(tmpdir(), 'journal-')), 'j.jsonl');
  const j = new JsonlJournal<{ n: number }>(path);
  j.replay(() => undefined);
  j.append({ n: 1 });
  j.close();
  appendFileSync(path, '{"n": 2, "tor');
  const first = new JsonlJournal<{ n: number }>(path);
  const seen: number[] = [];
  first.replay((r) => seen.push(r.n));
  assert.deepEqual(seen, [1]);
  first.append({ n: 3 });
  first.close();
  assert.equal(readFileSync(path, 'utf8'), '{"n":1}\n{"n":3}\n');
  const again: number[] = [];
  new JsonlJournal<{ n: number }>(path).replay((r) => again.push(r.n));
  assert.deepEqual(again, [1, 3]);
});

test('when a middle line is corrupt, then replay refuses to start instead of losing data silently', () => {
  const path = join(mkdtempSync(join(tmpdir(), 'journal-')), 'j.jsonl');
  appendFileSync(path, '{"n":1}\nnot json\n{"n":3}\n');
  assert.throws(() => new JsonlJournal(path).replay(() => undefined));
});

test('when records are appended, then each can be read back by the position append returned or replay reported', () => {
  const path = join(mkdtempSync(join(tmpdir(), 'journal-')), 'j.jsonl');
  const j = new JsonlJournal<{ s: string }>(path);
  j.replay(() => undefined);
  const [a, b] = j.appendMany([{ s: 'ä → 日本' }, { s: 'plain' }]);
  const c = j.append({ s: 'last' });
  assert.deepEqual(j.read(b!), { s: 'plain' });
  assert.deepEqual(
    [a, b, c].map((at) => j.read(at!).s),
    ['ä → 日本', 'plain', 'last'],
  );
  j.close();
  const again = new JsonlJournal<{ s: string }>(path);
  const lines: JournalLine[] = [];
  again.replay((_, line) => lines.push(line));
  assert.deepEqual(lines, [a, b, c]);
  assert.equal(again.records, 3);
  // Positions stay right when appending continues after a replay.
  const d = again.append({ s: 'after' });
  assert.deepEqual(again.read(d), { s: 'after' });
  assert.deepEqual(again.read(a!), { s: 'ä → 日本' });
  // The bytes of a line are the record as written, without its newline.
  assert.equal(again.readBytes(a!).toString('utf8'), '{"s":"ä → 日本"}');
  again.close();
});

test('when a journal is replayed read-only, then a torn last line is skipped but left in place and appends are refused', () => {
  const path = join(mkdtempSync(join(tmpdir(), 'journal-')), 'j.jsonl');
  appendFileSync(path, '{"n":1}\n{"n":2, "tor');
  const j = new JsonlJournal<{ n: number }>(path, { readOnly: true });
  const seen: number[] = [];
  assert.equal(
    j.replay((r) => seen.push(r.n)),
    1,
  );
  assert.deepEqual(seen, [1]);
  assert.equal(j.torn, true);
  assert.equal(readFileSync(path, 'utf8'), '{"n":1}\n{"n":2, "tor');
  assert.throws(() => j.append({ n: 3 }), /read-only/);
  j.close();
});

test('when a segmented journal fills segments, then batches rotate at the limit and a replay sees every record with its segment', () => {
  const dir = join(mkdtempSync(join(tmpdir(), 'segments-')), 'gen');
  const j = new SegmentedJournal<{ n: number }>(dir, { segmentRecords: 2 });
  j.replay(() => undefined);
  j.startAppending();
  const at = [
    ...j.appendMany([{ n: 1 }]),
    ...j.appendMany([{ n: 2 }, { n: 3 }]), // a batch is never split: segment 1 holds three
    ...j.appendMany([{ n: 4 }]),
  ];
  assert.deepEqual(
    at.map((a) => a.segment),
    [1, 1, 1, 2],
  );
  assert.deepEqual(readdirSync(dir).sort(), ['segment-000001.jsonl', 'segment-000002.jsonl']);
  assert.deepEqual(j.read(at[2]!), { n: 3 });
  j.close();

  const again = new SegmentedJournal<{ n: number }>(dir, { segmentRecords: 2 });
  const seen: Array<[number, SegmentLine]> = [];
  assert.equal(
    again.replay((r, line) => seen.push([r.n, line])),
    4,
  );
  assert.deepEqual(
    seen,
    [1, 2, 3, 4].map((n, i) => [n, at[i]]),
  );
  // Segment 2 holds one record: appends continue there.
  again.startAppending();
  assert.equal(again.appendMany([{ n: 5 }])[0]!.segment, 2);
  again.close();
});

test('when the last segment ends in a torn line, then replay cuts it off and appends go to a new segment', () => {
  const dir = join(mkdtempSync(join(tmpdir(), 'segments-')), 'gen');
  const j = new SegmentedJournal<{ n: number }>(dir, { segmentRecords: 10 });
  j.replay(() => undefined);
  j.startAppending();
  j.appendMany([{ n: 1 }]);
  j.close();
  appendFileSync(join(dir, 'segment-000001.jsonl'), '{"n":2,');
  const torn: string[] = [];
  const again = new SegmentedJournal<{ n: number }>(dir, { segmentRecords: 10 });
  const seen: number[] = [];
  // Applying a record may read earlier ones back, even of the segment being replayed.
  again.replay(
    (r, at) => seen.push(again.read(at).n + r.n),
    (path) => torn.push(path),
  );
  assert.deepEqual(seen, [2]);
  assert.deepEqual(torn, [join(dir, 'segment-000001.jsonl')]);
  assert.equal(readFileSync(join(dir, 'segment-000001.jsonl'), 'utf8'), '{"n":1}\n');
  again.startAppending();
  assert.equal(again.appendMany([{ n: 3 }])[0]!.segment, 2);
  again.close();
});
