// Our own API objects and events.k8s.io Events in the e2e cluster, for the controller's tests.
import path from 'node:path';
import type { RotationPolicy } from '../../../src/generated/api-types.js';
import { repoRoot } from './cluster.js';
import { kubectl } from './engine-shell.js';
import { ignoreNotFound, type Kube } from './k8s.js';

const GROUP = 'noderotation.io';
const VERSION = 'v1alpha1';

/** Installs (server-side apply, idempotent) our CRDs and the placeholder PriorityClass. */
export function installNoderotation(): void {
  kubectl(['apply', '--server-side', '--force-conflicts', '-f', path.join(repoRoot, 'deploy/crds')]);
  kubectl(['wait', '--for', 'condition=Established', '--timeout=60s', 'crd/rotationpolicies.noderotation.io']);
}

export async function createRotationPolicy(kube: Kube, policy: RotationPolicy): Promise<void> {
  await kube.custom.createClusterCustomObject({
    group: GROUP,
    version: VERSION,
    plural: 'rotationpolicies',
    body: policy,
  });
}

export async function getRotationPolicy(
  kube: Kube,
  name: string,
): Promise<(RotationPolicy & { status?: Record<string, unknown> }) | undefined> {
  return ignoreNotFound(
    kube.custom.getClusterCustomObject({ group: GROUP, version: VERSION, plural: 'rotationpolicies', name }) as Promise<
      RotationPolicy & { status?: Record<string, unknown> }
    >,
  );
}

export async function deleteRotationPolicy(kube: Kube, name: string): Promise<void> {
  await ignoreNotFound(
    kube.custom.deleteClusterCustomObject({ group: GROUP, version: VERSION, plural: 'rotationpolicies', name }),
  );
}

export interface EventV1 {
  reason?: string;
  type?: string;
  note?: string;
  regarding?: { kind?: string; name?: string };
  reportingController?: string;
  series?: { count: number };
}

/** events.k8s.io/v1 Events in a namespace (the controller records in its own). */
export async function eventsV1(kube: Kube, namespace: string): Promise<EventV1[]> {
  const list = (await kube.custom.listNamespacedCustomObject({
    group: 'events.k8s.io',
    version: 'v1',
    namespace,
    plural: 'events',
  })) as { items: EventV1[] };
  return list.items;
}
