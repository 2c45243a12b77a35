// Lint is part of `npm test`. Type-aware rules (recommendedTypeChecked) catch floating promises, unsafe `any`
// and misused async callbacks: they matter in the controller's long-running async shell.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import globals from 'globals';

export default tseslint.config(
  { ignores: ['dist/**', 'node_modules/**', 'src/generated/**', 'functions/generated/**', 'coverage/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: {
      globals: { ...globals.node },
      parserOptions: {
        projectService: { allowDefaultProject: ['*.js', 'bin/*.js'] },
        tsconfigRootDir: import.meta.dirname,
      },
    },
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      'no-console': 'off',
      eqeqeq: ['error', 'always'],
      // No line over 120 characters outside generated code; prettier wraps code, this catches comments/strings.
      'max-len': ['error', { code: 120, ignoreUrls: true }],
    },
  },
);
