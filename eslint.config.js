// One lint setup for every workspace: typescript-eslint's recommended rules, plus two import
// rules: the layer rule every service follows (STYLE.md §2: domain/ never imports the layers
// around it), and the workspace boundary (one workspace uses another only through its package
// name and the entry points its package.json `exports` lists, never by a path into its folder).
import { readdirSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { createNodeResolver, importX } from 'eslint-plugin-import-x';
import tseslint from 'typescript-eslint';

const ROOT = path.dirname(fileURLToPath(import.meta.url));

/** What a service's domain/ may not import: the adapters, the entry points and the wiring. */
const OUTSIDE_DOMAIN = [
  'data-access',
  'entry-points',
  'clients',
  'cli',
  'server.ts',
  'main.ts',
  'composition.ts',
];

const foldersOf = (dir) =>
  readdirSync(path.join(ROOT, dir), { withFileTypes: true })
    .filter((e) => e.isDirectory())
    .map((e) => e.name);
const services = foldersOf('services');
/** Every npm workspace: packages/* and services/* (the root package.json lists exactly these). */
const workspaces = [
  ...foldersOf('packages').map((p) => `packages/${p}`),
  ...services.map((s) => `services/${s}`),
];
/** The root package's own code: tools, benchmarks and the cross-service test suites. */
const ROOT_AREAS = ['scripts', 'bench', 'test', 'load'];

/** One import-x/no-restricted-paths zone per service: its domain/ against its other layers. */
const domainZones = services.map((service) => ({
  target: `services/${service}/src/domain`,
  from: OUTSIDE_DOMAIN.map((p) => `services/${service}/src/${p}`),
  message:
    'domain/ declares the ports it needs (domain/ports.ts); data-access/ implements them and ' +
    'server.ts wires them (STYLE.md §2).',
}));

const BOUNDARY_MESSAGE =
  'Import another workspace by its package name, through an entry point of its package.json ' +
  '`exports` (e.g. @support-agent/knowledge/search), never by a path into its folder. ' +
  'Need something it does not export yet? Add an entry point (src/exports/) or move it to packages/.';

/**
 * One zone per workspace: nothing outside it imports a file inside it by path. Package imports
 * (`@support-agent/x/…`) resolve through node_modules, outside the workspace's folder, and only
 * to what its `exports` lists (Node and TypeScript refuse the rest).
 */
const workspaceZones = workspaces.map((ws) => ({
  target: [...ROOT_AREAS, ...workspaces.filter((other) => other !== ws)],
  from: ws,
  message: BOUNDARY_MESSAGE,
}));

/**
 * The root package's code is not a library either: a workspace imports none of it, with these
 * deliberate exceptions, the repository's shared harness (never built into a package nor
 * shipped; a workspace package of its own would add a build step and nothing else):
 * - test/support: throwaway MariaDB/Redis/NATS, process stacks and fakes, used by every
 *   workspace's component tests;
 * - bench/lib and bench/synthetic-kb.ts: the measuring helpers and the generated KB, used by
 *   knowledge's own benchmarks and its embeddings test.
 */
const HARNESS_EXCEPTIONS = { test: ['./support'], bench: ['./lib', './synthetic-kb.ts'] };
const rootZones = ROOT_AREAS.map((area) => ({
  target: workspaces,
  from: area,
  except: HARNESS_EXCEPTIONS[area] ?? [],
  message:
    'A workspace does not import the root package’s scripts, benchmarks or tests; move what ' +
    'it needs to packages/ (eslint.config.js names the harness it may use).',
}));

/**
 * Imports are resolved to files (`./x.js` is `./x.ts` in the sources), so a zone holds whatever
 * the path is spelled like. Symlinks are not followed: a package import stays under
 * node_modules instead of becoming a path into the workspace it links to.
 */
const resolver = createNodeResolver({
  extensions: ['.ts', '.d.ts', '.js', '.mjs', '.json'],
  extensionAlias: { '.js': ['.ts', '.d.ts', '.js'] },
  symlinks: false,
});

export default tseslint.config(
  { ignores: ['**/dist/**', '**/node_modules/**', 'packages/proto/src/gen/**', 'data/**'] },
  {
    // Markdown (SECURITY.md, READMEs) holds no code ESLint checks; matching it keeps
    // `eslint <file>.md` quiet instead of warning "no matching configuration".
    files: ['**/*.md'],
    processor: { meta: { name: 'markdown-no-code' }, preprocess: () => [], postprocess: () => [] },
  },
  ...tseslint.configs.recommended,
  {
    // Tests read JSON bodies of any shape; typing each one would add noise, not safety.
    files: ['test/**/*.ts', '**/test/**/*.ts', 'bench/**/*.ts'],
    rules: { '@typescript-eslint/no-explicit-any': 'off' },
  },
  {
    rules: {
      '@typescript-eslint/no-unused-vars': [
        'error',
        { argsIgnorePattern: '^_', varsIgnorePattern: '^_' },
      ],
    },
  },
  {
    files: ['**/*.{ts,mts,js,mjs}'],
    plugins: { 'import-x': importX },
    settings: { 'import-x/resolver-next': [resolver] },
    rules: {
      'import-x/no-restricted-paths': [
        'error',
        { basePath: ROOT, zones: [...workspaceZones, ...rootZones] },
      ],
      // An unresolved relative import would slip past the zones unchecked.
      'import-x/no-unresolved': ['error', { ignore: ['^[^.]'] }],
    },
  },
  {
    // These programs import the SDKs the client tests generate when they run.
    files: ['test/clients/programs/uses-*.ts'],
    rules: { 'import-x/no-unresolved': 'off' },
  },
  {
    // The layer rule; the workspace zones apply here too (a rule's options are replaced, not
    // merged, by a later block, so both zone lists are given).
    files: ['services/*/src/domain/**/*.ts'],
    rules: {
      'import-x/no-restricted-paths': [
        'error',
        { basePath: ROOT, zones: [...workspaceZones, ...rootZones, ...domainZones] },
      ],
    },
  },
);
