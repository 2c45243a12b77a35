import { availableParallelism } from 'node:os';
import { defineConfig } from 'vitest/config';

// Unit and in-process tests. The end-to-end suite (real cluster) has its own config: vitest.e2e.config.ts.
export default defineConfig({
  test: {
    include: [
      'src/**/*.test.ts',
      'cli/**/*.test.ts',
      'test/docs/**/*.test.ts',
      'functions/**/*.test.ts',
      'controller/**/*.test.ts',
      'runtime/**/*.test.ts',
      'scripts/**/*.test.ts',
      'test/sim/**/*.test.ts',
      'bench/**/*.test.ts',
    ],
    exclude: ['test/e2e/**', 'node_modules/**', 'dist/**'],
    testTimeout: 60_000,
    // Every core: vitest's default leaves one free (one worker on CI's two cores), and the simulation's four
    // files (test/sim/seeds.ts) are CPU-bound.
    maxWorkers: availableParallelism(),
    // A larger young generation: the simulation allocates briskly, and 64 MiB semi-spaces (16 by default) took
    // about 5 % of its CPU time that went to scavenges (test/sim/README.md, CI).
    execArgv: ['--max-semi-space-size=64'],
  },
});
