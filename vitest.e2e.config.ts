import { defineConfig } from 'vitest/config';

// End-to-end tests against a real control plane with real Karpenter (kwok provider), built from Go modules
// by test/e2e/cluster/cluster.sh (docs/cluster.md). One cluster is shared, so files run one at a time: the
// controllers some files start act cluster-wide (their start-up sweep removes markers no anchor explains), and a
// MaintenancePlan governs every NodePool its selector matches. test/e2e/run.sh runs the files that do neither
// in a second process beside one of them (its two phases).
export default defineConfig({
  test: {
    include: ['test/e2e/**/*.test.ts'],
    globalSetup: ['test/e2e/helpers/global-setup.ts'],
    fileParallelism: false,
    // Expiry waits out a real expireAfter, drains wait on real PDBs: minutes, not seconds.
    testTimeout: 600_000,
    hookTimeout: 600_000,
    // globalSetup builds the binaries first when the cache is empty (10-20 min on 2 cores, docs/cluster.md).
    teardownTimeout: 120_000,
    retry: 0,
    reporters: ['verbose'],
  },
});
