import { test } from 'node:test';
import assert from 'node:assert/strict';
import { appendFileSync, mkdtempSync, readdirSync, readFileSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  AppError,
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

test('when a middle line is not JSON, then replay skips and counts it instead of refusing to start', () => {
  const path = join(mkdtempSync(join(tmpdir(), 'journal-')), 'j.jsonl');
  appendFileSync(path, '{"n":1}\nnot json\n{"n":3}\n');
  const j = new JsonlJournal<{ n: number }>(path);
  const seen: number[] = [];
  assert.equal(
    j.replay((r) => seen.push(r.n)),
    2,
  );
  assert.deepEqual(seen, [1, 3]);
  assert.equal(j.damaged, 1);
  j.close();
});

test('when a failed write left a torn record in front of the next one, then replay salvages the next record at its own position', () => {
  // What a full disk left behind before failed writes were cut back: half a record, then the
  // next acknowledged record on the same line.
  const path = join(mkdtempSync(join(tmpdir(), 'journal-')), 'j.jsonl');
  appendFileSync(path, '{"n":1}\n{"n":2,"s":"to{"n":3,"s":"{\\"x\\":1}"}\n{"n":4}\n');
  const j = new JsonlJournal<{ n: number }>(path);
  const seen: Array<[number, JournalLine]> = [];
  j.replay((r, line) => seen.push([r.n, line]));
  assert.deepEqual(
    seen.map(([n]) => n),
    [1, 3, 4],
  );
  assert.deepEqual(j.read(seen[1]![1]), { n: 3, s: '{"x":1}' });
  assert.equal(j.damaged, 1);
  j.close();
});

const enospc = (): Error =>
  Object.assign(new Error('ENOSPC: no space left on device, write'), { code: 'ENOSPC' });

test('when the disk fills in the middle of a write, then the partial record is cut, the error is a retryable 503, and appends work again once there is space', () => {
  const path = join(mkdtempSync(join(tmpdir(), 'journal-')), 'j.jsonl');
  let full = false;
  const j = new JsonlJournal<{ n: number; pad: string }>(path, {
    write: (fd, bytes) => {
      if (!full) return void writeSync(fd, bytes);
      writeSync(fd, bytes, 0, Math.floor(bytes.length / 2)); // what fit before the disk filled
      throw enospc();
    },
  });
  j.replay(() => undefined);
  j.append({ n: 1, pad: 'x' });
  full = true;
  for (const n of [2, 3]) {
    assert.throws(
      () =>
        j.appendMany([
          { n, pad: 'y'.repeat(100) },
          { n: n + 10, pad: 'z' },
        ]),
      (err: unknown) =>
        err instanceof AppError &&
        err.code === 'service_unavailable' &&
        err.httpStatus === 503 &&
        (err.retryAfter ?? 0) > 0,
    );
    assert.equal(readFileSync(path, 'utf8'), '{"n":1,"pad":"x"}\n');
  }
  full = false;
  const at = j.append({ n: 4, pad: 'w' });
  assert.deepEqual(j.read(at), { n: 4, pad: 'w' });
  j.close();
  const seen: number[] = [];
  const again = new JsonlJournal<{ n: number }>(path);
  again.replay((r) => seen.push(r.n));
  assert.deepEqual(seen, [1, 4]);
  assert.equal(again.damaged, 0);
  again.close();
});

test('when a write fails for another reason than space, then the partial record is cut too and the error passes unchanged', () => {
  const path = join(mkdtempSync(join(tmpdir(), 'journal-')), 'j.jsonl');
  let fail = false;
  const j = new JsonlJournal<{ n: number }>(path, {
    write: (fd, bytes) => {
      writeSync(fd, bytes, 0, fail ? 3 : bytes.length);
      if (fail) throw Object.assign(new Error('EIO: i/o error, write'), { code: 'EIO' });
    },
  });
  j.replay(() => undefined);
  j.append({ n: 1 });
  fail = true;
  assert.throws(() => j.append({ n: 2 }), { code: 'EIO' });
  fail = false;
  j.append({ n: 3 });
  j.close();
  assert.equal(readFileSync(path, 'utf8'), '{"n":1}\n{"n":3}\n');
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

test('when records are appended asynchronously, then they land where the synchronous append puts them, one append at a time, and a failed one is cut', async () => {
  const dir = join(mkdtempSync(join(tmpdir(), 'segments-')), 'gen');
  const j = new SegmentedJournal<{ n: number }>(dir, { segmentRecords: 2 });
  j.replay(() => undefined);
  j.startAppending();
  const pending = j.appendManyAsync([{ n: 1 }, { n: 2 }]);
  assert.throws(() => j.appendMany([{ n: 9 }]), /already in flight/);
  const at = [
    ...(await pending),
    ...(await j.appendManyAsync([{ n: 3 }])),
    ...j.appendMany([{ n: 4 }]),
  ];
  assert.deepEqual(
    at.map((a) => [a.segment, j.read(a).n]),
    [
      [1, 1],
      [1, 2],
      [2, 3],
      [2, 4],
    ],
  );
  j.close();

  const path = join(mkdtempSync(join(tmpdir(), 'journal-')), 'j.jsonl');
  let full = false;
  const k = new JsonlJournal<{ n: number }>(path, {
    write: (fd, bytes) => {
      writeSync(fd, bytes, 0, full ? 3 : bytes.length);
      if (full) throw enospc();
    },
  });
  k.replay(() => undefined);
  await k.appendManyAsync([{ n: 1 }]);
  full = true;
  await assert.rejects(
    k.appendManyAsync([{ n: 2 }]),
    (err: unknown) => err instanceof AppError && err.httpStatus === 503,
  );
  assert.equal(readFileSync(path, 'utf8'), '{"n":1}\n');
  full = false;
  assert.deepEqual(k.read((await k.appendManyAsync([{ n: 3 }]))[0]!), { n: 3 });
  k.close();
});
