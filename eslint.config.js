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
        projectService: { allowDefaultProject: ['*.js', 'bin/*.js', 'charts/*/files/*.js'] },
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
  // The layers (README, Layout): src/ is the pure library; runtime/ is the Kubernetes runtime (client,
  // kubeconfig, reflector, work queue, leader election), knowing nothing of rotations; controller/ and functions/
  // are shells over them, beside each other; cli/ (the program's entry point) wires them. An import that points
  // up or across is an error, so the structure drawn from the imports stays the one the README describes. Tests
  // may reach their fixtures.
  layer('src', ['runtime', 'controller', 'functions', 'cli', 'bench', 'test', 'scripts']),
  layer('runtime', ['controller', 'functions', 'cli', 'bench', 'test', 'scripts']),
  layer('controller', ['functions', 'cli', 'bench', 'test']),
  layer('functions', ['controller', 'runtime', 'cli', 'bench', 'test']),
);

/**
 * No non-test file under `dir` may import from the folders `above` (relative imports, any depth).
 * @param {string} dir
 * @param {string[]} above
 */
function layer(dir, above) {
  return {
    files: [`${dir}/**/*.ts`],
    ignores: [`${dir}/**/*.test.ts`],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: above.map((f) => ({
            regex: `^(\\.\\./)+${f}/`,
            message: `${dir}/ does not depend on ${f}/ (the layers: README, Layout)`,
          })),
        },
      ],
    },
  };
}
