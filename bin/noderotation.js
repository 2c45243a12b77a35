#!/usr/bin/env node
// Entry point for `npx noderotation`. The TypeScript sources are compiled to dist/ by `npm ci` (prepare).
import { mainProcess } from '../dist/cli/main.js';

process.exitCode = await mainProcess(process.argv.slice(2));
