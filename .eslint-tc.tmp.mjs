import js from '@eslint/js';
import tseslint from 'typescript-eslint';
export default tseslint.config(
  js.configs.recommended,
  ...tseslint.configs.recommendedTypeChecked,
  { files: ['**/*.ts'], languageOptions: { parserOptions: { projectService: true, tsconfigRootDir: '/work/wt/r' } }, rules: { 'no-control-regex': 'off', '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }] } },
);
