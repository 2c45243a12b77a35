// vitest globalSetup for the e2e suite: brings the cluster up unless one is already running (which is
// then reused and left running). A cluster this setup started is taken down at the end, unless
// NODEROTATION_E2E_KEEP_CLUSTER=1 (handy when iterating on one test).
import { clusterDown, clusterRunning, clusterUp } from './cluster.js';

export default function setup(): () => void {
  const wasRunning = clusterRunning();
  const env = clusterUp();
  const v = env.versions;
  console.error(
    `e2e cluster: k8s ${v.k8s}, karpenter ${v.karpenter}, kwok ${v.kwok}, etcd ${v.etcd}, ` +
      `crossplane CLI ${v.crossplane}; KUBECONFIG=${env.kubeconfig}${wasRunning ? ' (reused)' : ''}`,
  );
  return () => {
    if (!wasRunning && process.env.NODEROTATION_E2E_KEEP_CLUSTER !== '1') clusterDown();
  };
}
