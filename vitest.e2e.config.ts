import { defineConfig } from 'vitest/config';

/**
 * Files that spend their minutes waiting on Karpenter's own clocks and whose objects nothing else acts on: they
 * run as a second vitest process beside the rest (test/e2e/run.sh, vitest.e2e-waits.config.ts), on the same
 * cluster. Only files with no noderotation markers or policies qualify: the controllers the other files start
 * act cluster-wide (their start-up sweep removes markers no anchor explains), so placeholder-identity, which
 * holds such a state on purpose, stays in the main run.
 */
export const LONG_WAITS = ['test/e2e/expiry.test.ts'];

/** Shared by both e2e configurations. */
export const E2E_TEST_OPTIONS = {
  globalSetup: ['test/e2e/helpers/global-setup.ts'],
  // One cluster is shared: within a run, files go one at a time.
  fileParallelism: false,
  // Expiry waits out a real expireAfter, drains wait on real PDBs: minutes, not seconds.
  testTimeout: 600_000,
  hookTimeout: 600_000,
  // globalSetup builds the binaries first when the cache is empty (10-20 min on 2 cores, docs/cluster.md).
  teardownTimeout: 120_000,
  retry: 0,
  reporters: ['verbose'],
};

// End-to-end tests against a real control plane with real Karpenter (kwok provider), built from Go modules
// by test/e2e/cluster/cluster.sh (docs/cluster.md).
export default defineConfig({
  test: { ...E2E_TEST_OPTIONS, include: ['test/e2e/**/*.test.ts'], exclude: LONG_WAITS },
});
