#!/usr/bin/env node
// `kubectl noderotation <command>`: the kubectl plugin form of noderotation (cli/kubectl-plugin.ts).
import { pluginArgs } from '../dist/cli/kubectl-plugin.js';
import { mainProcess } from '../dist/cli/main.js';

process.exitCode = await mainProcess(pluginArgs(process.argv.slice(2)), 'kubectl noderotation');
