// Hand-written source files under services/ and packages/ (tests, builds and generated code
// aside), and their line total: `npx tsx scripts/source-lines.ts` prints it per workspace.
// test/architecture/single-source.test.ts checks its rules over the same list.
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

/** Folders that hold no hand-written source: dependencies, builds, generated code, tests. */
const SKIPPED_DIRS = new Set(['node_modules', 'dist', 'gen', 'test', 'fixtures']);
const SOURCE = /\.(ts|mts|cts|js|mjs|cjs)$/;
const NOT_SOURCE = /(\.d\.ts|\.test\.ts)$/;

function walk(dir: string, out: string[]): void {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) {
      if (!SKIPPED_DIRS.has(entry.name) && !entry.name.startsWith('.')) walk(full, out);
    } else if (entry.isFile() && SOURCE.test(entry.name) && !NOT_SOURCE.test(entry.name)) {
      out.push(path.relative(ROOT, full));
    }
  }
}

/** Repository-relative paths of every hand-written source file under services/ and packages/. */
export function handWrittenSources(): string[] {
  const out: string[] = [];
  for (const group of ['services', 'packages']) walk(path.join(ROOT, group), out);
  return out.sort();
}

export function lineCount(file: string): number {
  const text = readFileSync(path.join(ROOT, file), 'utf8');
  return text.length === 0 ? 0 : text.split('\n').length - (text.endsWith('\n') ? 1 : 0);
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const perWorkspace = new Map<string, { files: number; lines: number }>();
  let total = 0;
  const files = handWrittenSources();
  for (const file of files) {
    const workspace = file.split(path.sep).slice(0, 2).join('/');
    const lines = lineCount(file);
    const w = perWorkspace.get(workspace) ?? { files: 0, lines: 0 };
    perWorkspace.set(workspace, { files: w.files + 1, lines: w.lines + lines });
    total += lines;
  }
  for (const [workspace, w] of [...perWorkspace].sort())
    console.log(
      `${workspace.padEnd(22)} ${String(w.files).padStart(4)} files ${String(w.lines).padStart(7)} lines`,
    );
  console.log(
    `${'total'.padEnd(22)} ${String(files.length).padStart(4)} files ${String(total).padStart(7)} lines`,
  );
}
