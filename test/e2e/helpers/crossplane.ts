// Real Crossplane core beside the e2e cluster (`cluster.sh crossplane up|down`, test/e2e/cluster/crossplane-core.sh):
// started by the GitOps tests that need it and stopped after them, so no other test sees it running.
import { logTails, readEnvFile, runScript } from './cluster.js';

export interface CrossplaneEnv {
  /** The Function object `up` installed, pointing at the package it pushed to the local registry. */
  functionName: string;
  functionPackage: string;
  namespace: string;
}

/** `cluster.sh crossplane up`: builds Crossplane core on first use, starts it, installs our function. */
export function crossplaneUp(): CrossplaneEnv {
  const r = runScript('crossplane', 'up');
  if (r.status !== 0) throw new Error(`cluster.sh crossplane up failed (exit ${String(r.status)})\n${logTails()}`);
  const get = readEnvFile(r.stdout.trim());
  return {
    functionName: get('FUNCTION_NAME'),
    functionPackage: get('FUNCTION_PACKAGE'),
    namespace: get('CROSSPLANE_NAMESPACE'),
  };
}

export function crossplaneDown(): void {
  const r = runScript('crossplane', 'down');
  if (r.status !== 0) throw new Error(`cluster.sh crossplane down failed (exit ${String(r.status)})`);
}
