// One lint setup for every workspace: typescript-eslint's recommended rules.
import tseslint from 'typescript-eslint';

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
);
