// kubectl of the e2e cluster (built with its control plane, same version), admin unless told otherwise: one
// helper for every file, in the two forms the tests need.
import { spawnSync } from 'node:child_process';
import { readClusterEnv } from './cluster.js';

const env = readClusterEnv();

export interface KubectlResult {
  code: number;
  out: string;
  err: string;
  /** stdout then stderr, for messages that may come on either. */
  text: string;
}

/** kubectl that reports instead of throwing: exit code and output. Throws only when kubectl cannot be run. */
export function kubectlResult(args: string[], input?: string, kubeconfig = env.kubeconfig): KubectlResult {
  const r = spawnSync(env.kubectl, ['--kubeconfig', kubeconfig, ...args], { input, encoding: 'utf8' });
  if (r.error) throw new Error(`${env.kubectl}: ${r.error.message}`);
  return { code: r.status ?? -1, out: r.stdout, err: r.stderr, text: `${r.stdout}${r.stderr}` };
}

/** kubectl's stdout; throws with its stderr when it fails. */
export function kubectl(args: string[], input?: string): string {
  const r = kubectlResult(args, input);
  if (r.code !== 0) throw new Error(`kubectl ${args.join(' ')}: ${r.err}`);
  return r.out;
}
