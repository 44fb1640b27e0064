// A second `node --test` reporter beside `spec` (scripts/test.ts): it records which test file
// is running in the file named by TEST_PROGRESS_FILE (so the driver's time budget can say what
// it stopped), and at the end prints the wall time of every test file, slowest first, so a CI
// run shows where its minutes went.

import { writeFileSync } from 'node:fs';

const progressFile = process.env.TEST_PROGRESS_FILE;

/** @param {AsyncIterable<{ type: string, data: Record<string, any> }>} source */
export default async function* timingReporter(source) {
  // Files run one at a time (--test-concurrency=1), and node 20 passes a file's events on in
  // bursts, some only when the file is done: a file's wall time is counted from the previous
  // file's last event to its own last one, so its before() hooks are included either way.
  /** @type {Map<string, { ms: number, failed: boolean }>} */
  const files = new Map();
  let current;
  let start = Date.now();
  let last = start;
  const close = () => {
    if (current === undefined) return;
    const entry = files.get(current) ?? { ms: 0, failed: false };
    entry.ms += last - start;
    files.set(current, entry);
    start = last;
  };
  for await (const event of source) {
    const { type, data } = event;
    const file = data?.file;
    if (typeof file !== 'string') continue;
    if (file !== current) {
      close();
      current = file;
    }
    last = Date.now();
    if (type === 'test:fail')
      (files.get(file) ?? files.set(file, { ms: 0, failed: true }).get(file)).failed = true;
    if (progressFile && (type === 'test:pass' || type === 'test:fail')) {
      try {
        // The last file a result came from, and when: the driver's time budget names it.
        writeFileSync(progressFile, `${file}\n${new Date(last).toISOString()}\n`);
      } catch {
        // Progress is a diagnostic: never fail the run for it.
      }
    }
  }
  close();
  const rows = [...files.entries()].sort((a, b) => b[1].ms - a[1].ms);
  const total = rows.reduce((s, [, e]) => s + e.ms, 0);
  const cwd = `${process.cwd()}/`;
  yield `\nTest files by wall time (${rows.length} files, ${(total / 60_000).toFixed(1)} min):\n`;
  for (const [file, e] of rows) {
    const name = file.startsWith(cwd) ? file.slice(cwd.length) : file;
    yield `  ${(e.ms / 1000).toFixed(1).padStart(7)} s  ${name}${e.failed ? '  (failed)' : ''}\n`;
  }
}
