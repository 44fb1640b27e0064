// A second `node --test` reporter beside `spec` (scripts/test.ts): it keeps, in the JSON file
// named by TEST_PROGRESS_FILE, the wall time of every test file done so far and which file it
// heard from last. The driver reads it to say where a run that ran past its budget was, and to
// print the files by wall time at the end (a reporter's own last words are lost when
// --test-force-exit ends the run, so it prints nothing itself).

import { writeFileSync } from 'node:fs';

const progressFile = process.env.TEST_PROGRESS_FILE;

/** @param {AsyncIterable<{ type: string, data: Record<string, any> }>} source */
export default async function* timingReporter(source) {
  // A file's own events (its name is its path) mark when the runner starts it (dequeue) and
  // when it is done (complete); its tests' events come in between, in bursts.
  /** @type {Record<string, { ms: number, failed: boolean }>} */
  const done = {};
  let current;
  let since = Date.now();
  let last = since;
  let failed = false;
  const save = () => {
    if (!progressFile) return;
    try {
      writeFileSync(progressFile, JSON.stringify({ done, current, since, last, failed }));
    } catch {
      // Timing is a diagnostic: never fail the run for it.
    }
  };
  for await (const event of source) {
    const { type, data } = event;
    const file = data?.file;
    if (typeof file !== 'string') continue;
    const isFile = data.name === file && data.nesting === 0;
    if (type === 'test:dequeue' && isFile) {
      current = file;
      since = last = Date.now();
      failed = false;
      save();
    } else if (type === 'test:complete' && isFile) {
      done[file] = { ms: Date.now() - (file === current ? since : Date.now()), failed };
      save();
    } else if (file === current && (type === 'test:pass' || type === 'test:fail')) {
      last = Date.now();
      failed ||= type === 'test:fail';
      save();
    }
  }
}
