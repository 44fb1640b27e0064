// Import cycles between source files, across the whole repository: every workspace (packages/*,
// services/*) and the root's scripts, benchmarks and tests. `npx tsx scripts/import-cycles.ts`
// prints each cycle and exits 1 when there is one; test/architecture/import-cycles.test.ts runs
// the same check in CI. Type-only imports count: a cycle of types is still two modules that
// cannot be understood (or moved) one without the other.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

/** Folders that hold no source of ours: dependencies, builds, run-time data. */
const SKIPPED_DIRS = new Set(['node_modules', 'dist', 'data', 'results']);
const SOURCE = /\.(ts|mts|js|mjs)$/;
const SCOPE = '@support-agent/';

/** Every source file below `root` (absolute paths), declarations aside. */
export function sourceFiles(root: string): string[] {
  const out: string[] = [];
  const walk = (dir: string) => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const full = path.join(dir, entry.name);
      if (entry.isDirectory()) {
        if (!SKIPPED_DIRS.has(entry.name) && !entry.name.startsWith('.')) walk(full);
      } else if (SOURCE.test(entry.name) && !entry.name.endsWith('.d.ts')) out.push(full);
    }
  };
  walk(root);
  return out.sort();
}

/** The source file an existing path stands for: `x.js` is `x.ts` in the sources. */
function sourceOf(file: string): string | undefined {
  const stem = file.replace(/\.(js|mjs|ts|mts)$/, '');
  for (const candidate of [file, `${stem}.ts`, `${stem}.mts`, path.join(file, 'index.ts')])
    if (existsSync(candidate) && !candidate.endsWith('.d.ts') && SOURCE.test(candidate))
      return candidate;
  return undefined;
}

/**
 * `@support-agent/<name>[/entry]` → the source file behind that entry of the workspace's
 * package.json `exports` (its dist/… target read as src/…), so the graph spans workspaces.
 */
function workspaceEntries(root: string): Map<string, string> {
  const entries = new Map<string, string>();
  for (const group of ['packages', 'services']) {
    const dir = path.join(root, group);
    if (!existsSync(dir)) continue;
    for (const name of readdirSync(dir)) {
      const manifest = path.join(dir, name, 'package.json');
      if (!existsSync(manifest)) continue;
      const pkg = JSON.parse(readFileSync(manifest, 'utf8')) as {
        name: string;
        exports?: Record<string, { default?: string } | string>;
      };
      for (const [key, target] of Object.entries(pkg.exports ?? {})) {
        const file = typeof target === 'string' ? target : target.default;
        if (!file || key.includes('*')) continue;
        const src = sourceOf(
          path.join(dir, name, file.replace(/^\.\/dist\//, 'src/').replace(/\.js$/, '.ts')),
        );
        if (src) entries.set(key === '.' ? pkg.name : `${pkg.name}/${key.slice(2)}`, src);
      }
    }
  }
  return entries;
}

/** Each file's imports (relative ones and the workspaces' entry points) that are files here. */
export function importGraph(root: string): Map<string, string[]> {
  const files = sourceFiles(root);
  const entries = workspaceEntries(root);
  const graph = new Map<string, string[]>();
  for (const file of files) {
    const { importedFiles } = ts.preProcessFile(readFileSync(file, 'utf8'), true, true);
    const targets = new Set<string>();
    for (const { fileName } of importedFiles) {
      const target = fileName.startsWith('.')
        ? sourceOf(path.resolve(path.dirname(file), fileName))
        : fileName.startsWith(SCOPE)
          ? entries.get(fileName)
          : undefined;
      if (target) targets.add(target);
    }
    graph.set(file, [...targets].sort());
  }
  return graph;
}

/** The cycles of a graph: its strongly connected components of more than one file (or a file importing itself). */
export function cycles(graph: Map<string, string[]>): string[][] {
  // Tarjan's algorithm, iterative: a chain of imports can be deeper than the call stack.
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const onStack = new Set<string>();
  const stack: string[] = [];
  const found: string[][] = [];
  let next = 0;
  for (const start of graph.keys()) {
    if (index.has(start)) continue;
    const work: { node: string; edge: number }[] = [{ node: start, edge: 0 }];
    index.set(start, next);
    low.set(start, next++);
    stack.push(start);
    onStack.add(start);
    while (work.length > 0) {
      const frame = work[work.length - 1]!;
      const edges = graph.get(frame.node) ?? [];
      if (frame.edge < edges.length) {
        const to = edges[frame.edge++]!;
        if (!index.has(to)) {
          index.set(to, next);
          low.set(to, next++);
          stack.push(to);
          onStack.add(to);
          work.push({ node: to, edge: 0 });
        } else if (onStack.has(to)) {
          low.set(frame.node, Math.min(low.get(frame.node)!, index.get(to)!));
        }
        continue;
      }
      work.pop();
      const parent = work[work.length - 1];
      if (parent) low.set(parent.node, Math.min(low.get(parent.node)!, low.get(frame.node)!));
      if (low.get(frame.node) !== index.get(frame.node)) continue;
      const component: string[] = [];
      let member: string;
      do {
        member = stack.pop()!;
        onStack.delete(member);
        component.push(member);
      } while (member !== frame.node);
      if (component.length > 1 || edges.includes(frame.node)) found.push(component.sort());
    }
  }
  return found;
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const graph = importGraph(ROOT);
  const found = cycles(graph);
  for (const cycle of found)
    console.log(`cycle:\n  ${cycle.map((f) => path.relative(ROOT, f)).join('\n  ')}`);
  console.log(`${graph.size} files, ${found.length} import cycle(s)`);
  process.exitCode = found.length > 0 ? 1 : 0;
}
