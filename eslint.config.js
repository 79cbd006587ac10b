// Lint runs in `npm test`: typed rules catch floating promises, which in a storage layer are lost writes.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

// One project service serves every file, made with the settings of whichever file is linted first:
// the TypeScript and the JavaScript blocks must give the same ones, or the JavaScript tooling (in no
// tsconfig, so in the default project) fails to parse whenever a .ts file happens to come first.
const projectService = {
  allowDefaultProject: ['*.js', '*.mjs', '*.cjs', 'scripts/*.mjs', 'scripts/mutation/*.mjs', 'bench/import/*.mjs'],
  maximumDefaultProjectFileMatchCount_THIS_WILL_SLOW_DOWN_LINTING: 32,
};

export default tseslint.config(
  {
    ignores: [
      'dist/',
      '.tmp/',
      '**/.scratch/',
      'node_modules/',
      'coverage/',
      'infra/cdk.out/',
      'infra/node_modules/',
      '.cache/',
      'test/package/consumer/',
      '.stryker-tmp/',
      'reports/',
    ],
  },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  // src: typescript-eslint's type-checked recommended rules. require-await is off: the ports'
  // implementations are async so that a synchronous throw becomes a rejection (callers await
  // them), even where the body has nothing to await.
  {
    files: ['src/**/*.ts'],
    extends: [tseslint.configs.recommendedTypeChecked],
    rules: { '@typescript-eslint/require-await': 'off' },
  },
  // The JavaScript tooling (the mutation harness, the layer check, the Stryker and bench configs):
  // the recommended rules, with Node's globals, and the promise rules typed through the project
  // service's default project (these files are in no tsconfig).
  {
    files: ['**/*.js', '**/*.mjs', '**/*.cjs'],
    languageOptions: {
      parserOptions: {
        tsconfigRootDir: import.meta.dirname,
        projectService,
      },
      globals: Object.fromEntries(
        [
          'process',
          'console',
          'Buffer',
          'URL',
          'setTimeout',
          'clearTimeout',
          'setInterval',
          'clearInterval',
          'setImmediate',
          'structuredClone',
        ].map((name) => [name, 'readonly']),
      ),
    },
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': 'error',
      '@typescript-eslint/await-thenable': 'error',
    },
  },
  {
    files: ['**/*.cjs'],
    languageOptions: {
      sourceType: 'commonjs',
      globals: { module: 'writable', require: 'readonly', __dirname: 'readonly' },
    },
    rules: { '@typescript-eslint/no-require-imports': 'off' },
  },
  {
    files: ['**/*.ts'],
    languageOptions: { parserOptions: { projectService, tsconfigRootDir: import.meta.dirname } },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': 'error',
      '@typescript-eslint/await-thenable': 'error',
      '@typescript-eslint/no-explicit-any': 'error',
      '@typescript-eslint/consistent-type-imports': 'error',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      'no-control-regex': 'off',
    },
  },
);
