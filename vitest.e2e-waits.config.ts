import { defineConfig } from 'vitest/config';
import { E2E_TEST_OPTIONS, LONG_WAITS } from './vitest.e2e.config.js';

// The e2e files that mostly wait on Karpenter's clocks, run beside the rest (see vitest.e2e.config.ts).
export default defineConfig({ test: { ...E2E_TEST_OPTIONS, include: LONG_WAITS } });
