// `noderotation <args>` from the TypeScript sources, without a build: node --import tsx cli/from-source.ts ...
// The tests and benchmarks that need the CLI as a real process run it this way (bin/ runs the compiled dist/).
import { main } from './main.js';

process.exitCode = await main(process.argv.slice(2), { stdout: process.stdout, stderr: process.stderr });
