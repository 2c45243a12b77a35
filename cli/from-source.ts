// `noderotation <args>` from the TypeScript sources, without a build: node --import tsx cli/from-source.ts ...
// The tests and benchmarks that need the CLI as a real process run it this way (bin/ runs the compiled dist/).
import { mainProcess } from './main.js';

process.exitCode = await mainProcess(process.argv.slice(2));
