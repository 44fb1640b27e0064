// One lint setup for every workspace: typescript-eslint's recommended rules, plus the layer
// rule every service follows (STYLE.md §2): domain/ never imports the layers around it.
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

const services = readdirSync(path.join(ROOT, 'services'), { withFileTypes: true })
  .filter((e) => e.isDirectory())
  .map((e) => e.name);

/** One import-x/no-restricted-paths zone per service: its domain/ against its other layers. */
const domainZones = services.map((service) => ({
  target: `services/${service}/src/domain`,
  from: OUTSIDE_DOMAIN.map((p) => `services/${service}/src/${p}`),
  message:
    'domain/ declares the ports it needs (domain/ports.ts); data-access/ implements them and ' +
    'server.ts wires them (STYLE.md §2).',
}));

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
    // Imports are resolved to files (`./x.js` is `./x.ts` in the sources), so the zones hold
    // whatever the path is spelled like. An unresolved relative import would slip past the
    // zones unchecked: it is an error in domain/ too.
    files: ['services/*/src/domain/**/*.ts'],
    plugins: { 'import-x': importX },
    settings: {
      'import-x/resolver-next': [
        createNodeResolver({
          extensions: ['.ts', '.d.ts', '.js', '.json'],
          extensionAlias: { '.js': ['.ts', '.d.ts', '.js'] },
        }),
      ],
    },
    rules: {
      'import-x/no-restricted-paths': ['error', { basePath: ROOT, zones: domainZones }],
      'import-x/no-unresolved': ['error', { ignore: ['^[^.]'] }],
    },
  },
);
