import { defineConfig } from 'vitest/config';

// Installation checks (test/install/): the chart, the kustomize base, the alerts, the dashboard, the images and the
// GitHub Actions workflows against the real tools (helm, kustomize, kubeconform, promtool, actionlint), which
// `npm run test:install` builds first into the cache outside the clone (test/install/tools.sh). Seconds once the
// tools are built; no cluster needed.
export default defineConfig({
  test: {
    include: ['test/install/**/*.test.ts'],
    testTimeout: 120_000,
  },
});
