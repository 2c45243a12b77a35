// `noderotation` from source, for the e2e tests (the bin script runs the compiled dist/ instead).
import { main } from '../../../src/cli/main.js';

process.exitCode = await main(process.argv.slice(2), { stdout: process.stdout, stderr: process.stderr });
