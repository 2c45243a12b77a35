// Per-file wiring for the controller's e2e tests: our CRDs and PriorityClass installed, RotationPolicies that
// are deleted after each test, and controller processes that run as their own ServiceAccount (exactly the
// rules of controller/rbac.ts) and are killed after each test.
import { afterEach, beforeAll } from 'vitest';
import type { RotationPolicy, RotationPolicySpec } from '../../../src/generated/api-types.js';
import { useCluster } from './context.js';
import { ControllerProcess } from './controller-process.js';
import type { Kube, TestResources } from './k8s.js';
import {
  createRotationPolicy,
  deleteRotationPolicy,
  installNoderotation,
  serviceAccountKubeconfig,
} from './noderotation-api.js';

export { ALWAYS_OPEN } from '../../support/fixtures.js';

export interface ControllerContext {
  kube: Kube;
  res: TestResources;
  /** Creates a RotationPolicy `name` (deleted after the test). */
  policy(name: string, spec: RotationPolicySpec): Promise<RotationPolicy>;
  /** Starts a controller in `namespace` as its ServiceAccount (killed after the test). */
  controller(namespace: string, args?: string[], env?: Record<string, string>): Promise<ControllerProcess>;
  /** Something to undo after the test. */
  onCleanup(f: () => Promise<void> | void): void;
}

export function useController(): ControllerContext {
  const { kube, res } = useCluster();
  const cleanups: (() => Promise<void> | void)[] = [];
  const kubeconfigs = new Map<string, string>();
  beforeAll(() => installNoderotation());
  afterEach(async () => {
    for (const c of cleanups.splice(0).reverse()) await c();
    kubeconfigs.clear();
  });
  return {
    kube,
    res,
    onCleanup: (f) => cleanups.push(f),
    async policy(name, spec) {
      const p: RotationPolicy = {
        apiVersion: 'noderotation.io/v1alpha1',
        kind: 'RotationPolicy',
        metadata: { name },
        spec,
      };
      await createRotationPolicy(kube, p);
      cleanups.push(() => deleteRotationPolicy(kube, name));
      return p;
    },
    async controller(namespace, args = [], env = {}) {
      let kubeconfig = kubeconfigs.get(namespace);
      if (!kubeconfig) {
        const identity = await serviceAccountKubeconfig(namespace);
        cleanups.push(identity.cleanup);
        kubeconfig = identity.kubeconfig;
        kubeconfigs.set(namespace, kubeconfig);
      }
      const c = new ControllerProcess(namespace, args, kubeconfig, env);
      cleanups.push(() => c.kill());
      await c.start();
      return c;
    },
  };
}
