import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import boundaries from './tools/eslint/boundaries.js';

// The core decides; apps and other libs do I/O. These imports are what "I/O" means for libs/core.
const forbiddenInCore = [
  '@nestjs/*', '@prisma/*', 'prisma', 'bullmq', 'ioredis', '@kubernetes/*', 'pg', 'redis',
  'fs', 'fs/*', 'node:*', 'net', 'http', 'https', 'http2', 'child_process', 'worker_threads',
  'dgram', 'dns', 'tls', 'cluster', 'os', 'process', 'readline', '#db', '#kube', '#sim',
];

// SQL lives only in libs/db (DESIGN.md): elsewhere, neither the pg driver, Prisma, nor db internals (only
// its public door #db), and no SQL text. The SQL check looks for a statement's shape in upper-case keywords.
const SQL = '/\\b(SELECT|UPDATE|INSERT INTO|DELETE FROM)\\b[\\s\\S]*\\b(FROM|SET|VALUES|WHERE|RETURNING)\\b/';
const sqlOnlyInDb = {
  'no-restricted-imports': ['error', {
    paths: [{ name: 'pg', message: 'SQL lives only in libs/db: use a #db repository or function.' }],
    patterns: [
      { group: ['pg/*', '@prisma/*'], message: 'SQL lives only in libs/db: use a #db repository or function.' },
      { group: ['**/libs/db/**', '**/db/src/**', '#db/*'], message: 'Import libs/db through its public door, #db.' },
    ],
  }],
  'no-restricted-syntax': ['error',
    { selector: `Literal[value=${SQL}]`, message: 'SQL lives only in libs/db: move this statement into a #db repository or function.' },
    { selector: `TemplateElement[value.raw=${SQL}]`, message: 'SQL lives only in libs/db: move this statement into a #db repository or function.' },
  ],
};

export default tseslint.config(
  { ignores: ['dist/**', 'node_modules/**', 'coverage/**', 'libs/db/src/generated/**', '.cache/**', 'jest.config.js', 'eslint.config.js', 'apps/scheduler/dev/*.mjs', 'tools/eslint/*.js', 'test/k8s/support/rendezvous/*.mjs'] },
  js.configs.recommended,
  ...tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: { parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname } },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/switch-exhaustiveness-check': 'error',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/consistent-type-imports': 'off',
      '@typescript-eslint/no-extraneous-class': 'off',
    },
  },
  {
    files: ['libs/core/**/*.ts'],
    rules: {
      'no-restricted-imports': ['error', {
        patterns: [{ group: forbiddenInCore, message: 'libs/core is pure: no framework, database, queue, Kubernetes or Node I/O imports.' }],
      }],
      'no-restricted-globals': ['error', { name: 'process', message: 'libs/core never reads the environment.' }],
      'no-restricted-properties': ['error', { object: 'Date', property: 'now', message: 'Time is injected into the core (snapshot.now).' }, { object: 'Math', property: 'random', message: 'The core is deterministic.' }],
    },
  },
  {
    files: ['apps/**/*.ts', 'apps/**/*.tsx', 'libs/**/*.ts'],
    ignores: ['libs/db/**', 'libs/core/**', '**/*.spec.ts'],
    rules: sqlOnlyInDb,
  },
  // The dependency graph of apps and libraries, and the Prisma client only in libs/db (tools/eslint/boundaries.js).
  {
    files: ['apps/**/*.ts', 'apps/**/*.tsx', 'libs/**/*.ts'],
    plugins: { boundaries },
    rules: { 'boundaries/dag': 'error', 'boundaries/no-prisma-outside-db': 'error' },
  },
  {
    files: ['**/*.spec.ts', 'test/**/*.ts', 'bench/**/*.ts'],
    rules: {
      '@typescript-eslint/no-unsafe-assignment': 'off',
      '@typescript-eslint/no-unsafe-member-access': 'off',
      '@typescript-eslint/no-unsafe-argument': 'off',
      '@typescript-eslint/no-unsafe-call': 'off',
      '@typescript-eslint/no-non-null-assertion': 'off',
      '@typescript-eslint/unbound-method': 'off',
    },
  },
);
