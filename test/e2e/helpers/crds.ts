// Third-party CRDs that cluster.sh keeps beside the binaries it builds (its cache, `<cache>/bin/`): what the
// example tests validate Argo CD's, Karpenter's, Crossplane's and Flux's kinds against.
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { cachedTool, repoRoot, type ClusterEnv } from './cluster.js';

/** A version pinned in test/e2e/cluster/versions.env, e.g. ARGOCD_VERSION. */
export function pinnedVersion(key: string): string {
  const line = readFileSync(join(repoRoot, 'test/e2e/cluster/versions.env'), 'utf8')
    .split('\n')
    .find((l) => l.startsWith(`${key}=`));
  if (!line) throw new Error(`test/e2e/cluster/versions.env has no ${key}`);
  return line.slice(key.length + 1).trim();
}

/** `<cache>/bin`, the same root cachedTool and cluster.sh use. */
const binRoot = (): string => dirname(dirname(cachedTool('kubeconform')));

/** Argo CD's CRDs (application-crd.yaml, ...), from the argo-cd module: `cluster.sh build argocd-crds`. */
export const argocdCrdsDir = (): string => join(binRoot(), `argocd-crds-${pinnedVersion('ARGOCD_VERSION')}`);

/** Karpenter's CRDs as cluster.sh installs them. */
export const karpenterCrdsDir = (env: ClusterEnv): string =>
  join(binRoot(), `karpenter-kwok-${env.versions.karpenter}`, 'crds');

/** Flux's CRDs, kept beside source-controller and kustomize-controller: `cluster.sh build flux`. */
export function fluxCrdsDirs(): { source: string; kustomize: string } {
  const dir = (c: string): string => join(binRoot(), `${c}-${pinnedVersion('FLUX_CONTROLLERS_VERSION')}`, 'crds');
  return { source: dir('source-controller'), kustomize: dir('kustomize-controller') };
}
