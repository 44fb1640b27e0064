import { test } from 'node:test';
import assert from 'node:assert/strict';
import { appendFileSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { JsonlJournal } from '@support-agent/shared';

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
