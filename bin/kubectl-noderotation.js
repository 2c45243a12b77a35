#!/usr/bin/env node
// `kubectl noderotation <command>`: the kubectl plugin form of noderotation (cli/kubectl-plugin.ts).
import { pluginArgs } from '../dist/cli/kubectl-plugin.js';
import { main } from '../dist/cli/main.js';

process.exitCode = await main(pluginArgs(process.argv.slice(2)), { stdout: process.stdout, stderr: process.stderr });
