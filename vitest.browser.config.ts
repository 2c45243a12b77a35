import { defineConfig } from 'vitest/config';

// The HTML report in a real browser (test/browser/): headless Chromium from the npm package @sparticuz/chromium
// (unpacked into the system's temporary directory on first launch), no network. Seconds, plus the 10,000-node
// simulation the test renders.
export default defineConfig({
  test: {
    include: ['test/browser/**/*.test.ts'],
    testTimeout: 120_000,
    hookTimeout: 180_000,
  },
});
