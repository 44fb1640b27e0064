import assert from 'node:assert/strict';
import {
  chmodSync,
  mkdirSync,
  mkdtempSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, describe, it } from 'node:test';
import { securePrivateDir } from '../src/private-dir.js';

const root = mkdtempSync(path.join(os.tmpdir(), 'private-dir-'));
after(() => rmSync(root, { recursive: true, force: true }));

const mode = (p: string) => statSync(p).mode & 0o777;

describe('securePrivateDir', () => {
  it('when DATA_DIR is missing, then it is created 0700', () => {
    const dir = path.join(root, 'fresh', 'data');
    securePrivateDir(dir);
    assert.equal(mode(dir), 0o700);
  });

  it('when DATA_DIR already holds world-readable files and folders, then they become 0600 and 0700', () => {
    const dir = path.join(root, 'old');
    mkdirSync(path.join(dir, 'tickets', 'deep'), { recursive: true, mode: 0o755 });
    chmodSync(dir, 0o755);
    writeFileSync(path.join(dir, 'tickets', 'journal.jsonl'), '{}\n', { mode: 0o644 });
    writeFileSync(path.join(dir, 'tickets', 'deep', 'secret'), 'x', { mode: 0o666 });
    writeFileSync(path.join(root, 'outside'), 'x', { mode: 0o644 });
    symlinkSync(path.join(root, 'outside'), path.join(dir, 'link'));
    securePrivateDir(dir);
    assert.equal(mode(dir), 0o700);
    assert.equal(mode(path.join(dir, 'tickets')), 0o700);
    assert.equal(mode(path.join(dir, 'tickets', 'deep')), 0o700);
    assert.equal(mode(path.join(dir, 'tickets', 'journal.jsonl')), 0o600);
    assert.equal(mode(path.join(dir, 'tickets', 'deep', 'secret')), 0o600);
    // A link's target outside DATA_DIR is not touched.
    assert.equal(mode(path.join(root, 'outside')), 0o644);
  });
});
