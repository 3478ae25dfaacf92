import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import globals from 'globals';
import { createNodeResolver, importX } from 'eslint-plugin-import-x';

export default tseslint.config(
  {
    ignores: [
      '**/node_modules/**',
      '**/dist/**',
      'cloud/.bundle-test-*/**',
      'data/**',
      '.tmp/**',
      '**/*.js',
      '!eslint.config.js',
    ],
  },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: { globals: { ...globals.node } },
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/no-explicit-any': 'off',
      'no-console': 'off',
    },
  },
  {
    // the portal runs in browsers
    files: ['web/src/**/*.{ts,tsx}'],
    languageOptions: { globals: { ...globals.browser } },
  },
  {
    // The cloud's storage is async on both engines: a query not awaited is a bug the types alone miss
    // (`if (promise)` is always true), in the product and in the tests that drive it. Type-aware,
    // so limited to the cloud and the tools that drive it.
    files: ['cloud/src/**/*.ts', 'tools/**/*.ts'],
    languageOptions: { parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname } },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': ['error', { checksVoidReturn: false }],
      '@typescript-eslint/await-thenable': 'error',
    },
  },
  {
    // An import cycle makes a module's dependencies unclear and its load order fragile: registries
    // belong at a composition root (cloud/src/modules.ts), shared helpers outside capabilities.
    // Type-only imports do not count (they vanish at run time).
    files: ['**/*.{ts,tsx}'],
    plugins: { 'import-x': importX },
    settings: {
      // without these, imported .ts files are not followed and no cycle is ever seen
      'import-x/extensions': ['.ts', '.tsx', '.js', '.mjs'],
      'import-x/parsers': { '@typescript-eslint/parser': ['.ts', '.tsx'] },
      'import-x/resolver-next': [createNodeResolver({ extensions: ['.ts', '.tsx', '.js', '.mjs'] })],
    },
    rules: { 'import-x/no-cycle': 'error' },
  },
);
