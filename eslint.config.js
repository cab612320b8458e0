// The lint gate (`npm run lint`, run by .ci/run before the typecheck). Formatting is Prettier's job (.prettierrc.json);
// nothing here checks layout. docs/architecture.md ("Lint gate") explains the rules.
//
// Type-aware rules need TypeScript's JS API, which TypeScript 7 (the compiler `npm run typecheck` runs) does not have:
// package.json installs TypeScript 6 under the name `typescript` for typescript-eslint, and TypeScript 7 as
// `@typescript/native`.
import js from '@eslint/js';
import { defineConfig, globalIgnores } from 'eslint/config';
import simpleImportSort from 'eslint-plugin-simple-import-sort';
import globals from 'globals';
import tseslint from 'typescript-eslint';

/** Time is injected (core/clock.ts): code outside the clock never reads the wall clock or starts a timer itself. */
const timeRules = {
  'no-restricted-properties': [
    'error',
    { object: 'Date', property: 'now', message: 'Read the time from the injected Clock (core/clock.ts).' },
    { object: 'globalThis', property: 'setTimeout', message: 'Use the injected Clock (core/clock.ts).' },
    { object: 'globalThis', property: 'setInterval', message: 'Use the injected Clock (core/clock.ts).' },
  ],
  'no-restricted-globals': [
    'error',
    { name: 'setTimeout', message: 'Use clock.after() from the injected Clock (core/clock.ts).' },
    { name: 'setInterval', message: 'Use clock.every() from the injected Clock (core/clock.ts).' },
  ],
  'no-restricted-syntax': [
    'error',
    {
      selector: "NewExpression[callee.name='Date'][arguments.length=0]",
      message: 'new Date() reads the wall clock: use new Date(clock.now()).',
    },
  ],
  'no-restricted-imports': [
    'error',
    {
      paths: [
        { name: 'node:timers', importNames: ['setTimeout', 'setInterval'], message: 'Use the injected Clock.' },
        {
          name: 'node:timers/promises',
          importNames: ['setTimeout', 'setInterval'],
          message: 'Use the injected Clock.',
        },
      ],
    },
  ],
};

export default defineConfig(
  globalIgnores(['node_modules/', 'coverage/', '.switchboard/', 'tmp/']),

  // Every file: the JS recommended set and one import order.
  {
    files: ['**/*.{js,mjs,ts,mts}'],
    extends: [js.configs.recommended],
    plugins: { 'simple-import-sort': simpleImportSort },
    linterOptions: { reportUnusedDisableDirectives: 'error' },
    rules: {
      // One block, no blank lines: side-effect imports, node: builtins, packages, then relative paths (../ before ./);
      // sorted by path within each kind.
      'simple-import-sort/imports': ['error', { groups: [['^\\u0000', '^node:', '^@?\\w', '^', '^\\.']] }],
      'simple-import-sort/exports': 'error',
    },
  },

  // Plain JavaScript run by Node (bin/, scripts/, the orphan guard, the fake agent CLIs): no type information.
  {
    files: ['**/*.{js,mjs}'],
    ignores: ['src/gateway/web/**'],
    languageOptions: { globals: globals.node },
  },

  // The web page's modules run in the browser, not under tsconfig: browser globals, no type information.
  {
    files: ['src/gateway/web/**/*.js'],
    languageOptions: { globals: globals.browser },
  },

  // TypeScript: type-aware, through the project service (tsconfig.json).
  {
    files: ['**/*.{ts,mts}'],
    extends: [tseslint.configs.recommendedTypeChecked],
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      '@typescript-eslint/switch-exhaustiveness-check': [
        'error',
        // A `default:` does not count as handling a union's members: a new member fails the lint until a case handles it
        // (a `default` that checks `never` is still allowed). A switch over a plain string or number needs a default.
        { considerDefaultExhaustiveForUnions: false, requireDefaultForNonUnion: true },
      ],
      '@typescript-eslint/no-unnecessary-type-assertion': 'error',
      '@typescript-eslint/consistent-type-imports': [
        'error',
        { prefer: 'type-imports', fixStyle: 'separate-type-imports' },
      ],
      '@typescript-eslint/no-explicit-any': 'error',
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/await-thenable': 'error',
      '@typescript-eslint/no-misused-promises': 'error',
      // Off: an async function without await is how this code implements a Promise-returning interface.
      '@typescript-eslint/require-await': 'off',
      // Off: what it found was String() of `unknown` CLI arguments and wire records that a null check narrows to `{}`;
      // String() is the conversion meant there.
      '@typescript-eslint/no-base-to-string': 'off',
      // `_name` marks a parameter or binding kept for its position; `{ dropped, ...rest }` drops a field.
      '@typescript-eslint/no-unused-vars': [
        'error',
        { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrors: 'none', ignoreRestSiblings: true },
      ],
    },
  },

  // Tests and benchmarks read JSON bodies and fixtures as `any` on purpose: the unsafe-any rules are for the daemon.
  {
    files: ['**/*.test.ts', 'test/**/*.ts', 'bench/**/*.ts'],
    rules: {
      '@typescript-eslint/no-unsafe-argument': 'off',
      '@typescript-eslint/no-unsafe-assignment': 'off',
      '@typescript-eslint/no-unsafe-call': 'off',
      '@typescript-eslint/no-unsafe-member-access': 'off',
      '@typescript-eslint/no-unsafe-return': 'off',
    },
  },

  // node:test's test(), it(), describe() and hooks return promises the runner itself tracks.
  {
    files: ['**/*.test.ts', 'test/**/*.ts'],
    rules: {
      '@typescript-eslint/no-floating-promises': [
        'error',
        {
          allowForKnownSafeCalls: [
            {
              from: 'package',
              package: 'node:test',
              name: ['test', 'it', 'describe', 'suite', 'before', 'after', 'beforeEach', 'afterEach'],
            },
          ],
        },
      ],
    },
  },

  // The daemon's own code never reads the wall clock or starts a timer except through core/clock.ts. Exempt: tests and
  // benchmarks (they drive real processes and sockets, and measure real time), the orphan guard (a separate plain-JS
  // process that cannot load the clock), the browser page. setImmediate is allowed: it yields to the event loop, it
  // does not wait for time to pass.
  {
    files: ['src/**/*.{ts,mts,js,mjs}'],
    ignores: ['src/core/clock.ts', 'src/**/*.test.ts', 'src/coding/orphan-guard-main.mjs', 'src/gateway/web/**'],
    rules: timeRules,
  },
);
