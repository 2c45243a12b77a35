// `noderotation <args>` from the sources, for the benchmarks: node --import tsx bench/function-main.ts function ...
import { main } from '../src/cli/main.js';

process.exitCode = await main(process.argv.slice(2), { stdout: process.stdout, stderr: process.stderr });
