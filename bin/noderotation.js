#!/usr/bin/env node
// Entry point for `npx noderotation`. The TypeScript sources are compiled to dist/ by `npm ci` (prepare).
import { main } from '../dist/cli/main.js';

process.exitCode = await main(process.argv.slice(2), { stdout: process.stdout, stderr: process.stderr });
