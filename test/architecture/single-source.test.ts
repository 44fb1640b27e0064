// One place per concern, checked over every hand-written source file under services/ and
// packages/ (scripts/source-lines.ts: tests, builds and generated code aside): the ticket
// stream's name and settings, the JetStream consumer settings and the MySQL lock-conflict
// handling each live in exactly one module, and no file grows past 500 lines.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import { handWrittenSources, lineCount, ROOT } from '../../scripts/source-lines.js';

const sources = handWrittenSources();
const texts = new Map(sources.map((f) => [f, readFileSync(path.join(ROOT, f), 'utf8')]));

/** The files whose text matches `pattern`. */
function filesMatching(pattern: RegExp): string[] {
  return sources.filter((f) => pattern.test(texts.get(f)!));
}

const CONCERNS: Array<{ what: string; home: string; patterns: RegExp[] }> = [
  {
    what: 'the stream name TICKETS',
    home: 'packages/events/src/contract.ts',
    patterns: [/['"`]TICKETS['"`]/],
  },
  {
    what: 'the stream settings (retention, max age, duplicate window)',
    home: 'packages/events/src/contract.ts',
    patterns: [/\bretention\s*:/, /RetentionPolicy/, /\bmax_age\b/, /\bduplicate_window\b/],
  },
  {
    what: 'the JetStream consumer settings (ack wait, ack policy)',
    home: 'packages/events/src/contract.ts',
    patterns: [/\back_wait\b/, /\back_policy\b/, /\bAckPolicy\b/],
  },
  {
    what: 'MySQL deadlock and lock-wait handling',
    home: 'packages/shared/src/mysql/transactions.ts',
    patterns: [/ER_LOCK_DEADLOCK/, /ER_LOCK_WAIT_TIMEOUT/, /\b1213\b/, /\b1205\b/],
  },
];

describe('single source: each concern is written in exactly one file', () => {
  it('when the hand-written sources are listed, then every service and shared package is among them', () => {
    for (const dir of ['services/tickets/src', 'services/gateway/src', 'packages/shared/src'])
      assert.ok(
        sources.some((f) => f.startsWith(dir.replaceAll('/', path.sep))),
        dir,
      );
    assert.ok(!sources.some((f) => /(^|[\\/])(test|dist|gen|node_modules)[\\/]/.test(f)));
  });

  for (const concern of CONCERNS) {
    it(`when the sources are searched for ${concern.what}, then only ${concern.home} has it`, () => {
      for (const pattern of concern.patterns) {
        assert.deepEqual(
          filesMatching(pattern),
          [concern.home.replaceAll('/', path.sep)],
          `${pattern} appears in these files; it belongs in ${concern.home} only`,
        );
      }
    });
  }
});

describe('file size: no hand-written source file is over 500 lines', () => {
  it('when every source file is counted, then none has more than 500 lines', () => {
    const tooLong = sources
      .map((f) => ({ file: f, lines: lineCount(f) }))
      .filter((f) => f.lines > 500);
    assert.deepEqual(tooLong, []);
  });
});
