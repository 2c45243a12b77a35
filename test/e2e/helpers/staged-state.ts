// States an operator (or an unlucky crash) can leave, staged by hand as admin for the safety tests (issue 17): a
// rotation mid-surge or marked draining, a NodeClaim Karpenter cannot launch, the RotationPolicy CRD as an older
// installation serves it; and what those tests wait on: why the controller says a pool is idle.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { parse, stringify } from 'yaml';
import { A, rfc3339 } from '../../../src/engine/annotations.js';
import type { NodePoolRotationStatus } from '../../../src/generated/api-types.js';
import { NODEPOOL_LABEL, type NodeClaim } from '../../../src/karpenter/types.js';
import { repoRoot } from './cluster.js';
import { ON_DEMAND_AMD64, poolWithApp } from './context.js';
import type { ControllerProcess } from './controller-process.js';
import { kubectl } from './kubectl.js';
import { nodeReady, waitFor, type Kube, type TestResources } from './k8s.js';
import { getRotationPolicy, installNoderotation } from './noderotation-api.js';
import { writeReferenceRotation } from './reference-state.js';

/** The placeholder PriorityClass an installation has (deploy/placeholder-priorityclass.yaml), the default. */
export const PLACEHOLDER_CLASS = 'noderotation-placeholder';

export interface StagedPool {
  ns: string;
  pool: string;
  claim: NodeClaim;
  /** The claim's node. */
  node: string;
}

/** A fresh pool running one app on one node (poolWithApp), with the claim's node name at hand. */
export async function stagedPool(kube: Kube, res: TestResources, prefix: string): Promise<StagedPool> {
  const p = await poolWithApp(kube, res, prefix, ON_DEMAND_AMD64);
  return { ...p, node: p.claim.status?.nodeName as string };
}

export interface SurgeReady extends StagedPool {
  placeholder: string;
  /** The node Karpenter launched for the placeholder. */
  surgeNode: string;
}

/**
 * A pool whose rotation is mid-surge in the reference's form (writeReferenceRotation, placeholder in
 * `controllerNs`), resolved once the placeholder runs on a Ready surge node of the pool that Karpenter launched
 * for it: the state in which the engine marks the claim draining and deletes it. No controller runs meanwhile.
 */
export async function stageSurgeReady(
  kube: Kube,
  res: TestResources,
  prefix: string,
  controllerNs: string,
): Promise<SurgeReady> {
  const p = await stagedPool(kube, res, prefix);
  const placeholder = await writeReferenceRotation(kube, {
    pool: p.pool,
    namespace: controllerNs,
    claim: p.claim.metadata.name,
    node: p.node,
    priorityClass: PLACEHOLDER_CLASS,
    cpu: '1',
  });
  const surgeNode = await surgeRunning(kube, controllerNs, p);
  return { ...p, placeholder, surgeNode };
}

/**
 * Waits until the placeholder of `s`'s rotation (in `ns`, found by its surge-for label) runs on a Ready node of the
 * pool other than the claim's own, which Karpenter launched for it; returns that node. Also what a test waits for
 * before it ends when a rotation of its started: a pool deleted while Karpenter is still launching its surge node
 * leaves that Node behind (the kwok provider creates it after the claim is gone).
 */
export async function surgeRunning(kube: Kube, ns: string, s: StagedPool): Promise<string> {
  return waitFor(
    `the placeholder for ${s.claim.metadata.name} running on a Ready surge node`,
    async () => {
      const pod = (await kube.pods(ns, `${A.surgeFor}=${s.claim.metadata.name}`))[0];
      const host = pod?.spec?.nodeName;
      if (pod?.status?.phase !== 'Running' || !host || host === s.node) return undefined;
      const n = await kube.getNode(host);
      return nodeReady(n) && n?.metadata?.labels?.[NODEPOOL_LABEL] === s.pool ? host : undefined;
    },
    { timeoutMs: 180_000 },
  );
}

/**
 * Marks the rotation draining as the engine's own writes do right before its delete (pool state and
 * draining-at, claim state), with `startedAt` and `drainingAt` as given: what a crash between those writes and
 * the delete leaves, or what an operator writes by hand.
 */
export function markDraining(s: StagedPool, at: { startedAt: number; drainingAt: number }): void {
  kubectl([
    'annotate',
    '--overwrite',
    'nodepool',
    s.pool,
    `${A.activeRotationState}=draining`,
    `${A.drainingAt}=${rfc3339(at.drainingAt)}`,
  ]);
  kubectl([
    'annotate',
    '--overwrite',
    'nodeclaim',
    s.claim.metadata.name,
    `${A.state}=draining`,
    `${A.startedAt}=${rfc3339(at.startedAt)}`,
  ]);
}

/** A NodePool's entry in its policy's status, as the controller last wrote it. */
export async function poolStatus(
  kube: Kube,
  policy: string,
  pool: string,
): Promise<NodePoolRotationStatus | undefined> {
  const status = (await getRotationPolicy(kube, policy))?.status as
    { nodePools?: NodePoolRotationStatus[] } | undefined;
  return status?.nodePools?.find((p) => p.name === pool);
}

/**
 * Waits until the controller says, in the policy's status (written at the end of each pass of the pool, after
 * its writes), that the pool is idle for a reason matching `why`; returns that reason. This is the signal that a
 * full pass of the pool has decided and found nothing it may do — a controller that acted instead would show a
 * rotation in flight there, and the wait would time out.
 */
export async function idleBecause(
  kube: Kube,
  c: ControllerProcess,
  policy: string,
  pool: string,
  why: RegExp,
): Promise<string> {
  return waitFor(
    `NodePool ${pool} idle: ${String(why)}`,
    async () => {
      const waiting = (await poolStatus(kube, policy, pool))?.waiting;
      return waiting !== undefined && why.test(waiting) ? waiting : undefined;
    },
    {
      timeoutMs: 90_000,
      intervalMs: 1000,
      describe: async () => `${JSON.stringify(await poolStatus(kube, policy, pool))}\n${c.tail(15)}`,
    },
  );
}

/**
 * Serves the RotationPolicy CRD without the validation our CRD has since added for `spec.ageThreshold` (from 1s)
 * and `spec.surge.maxUnavailable` (at most 1): as a cluster whose CRD an upgrade left behind (Helm never upgrades
 * `crds/`) does. Returns the restore, which applies deploy/crds again.
 */
export function serveLooserPolicyCrd(): () => Promise<void> {
  const file = path.join(repoRoot, 'deploy/crds/noderotation.io_rotationpolicies.yaml');
  const crd = parse(readFileSync(file, 'utf8')) as {
    spec: { versions: { schema: { openAPIV3Schema: { properties: { spec: { properties: SpecProps } } } } }[] };
  };
  for (const v of crd.spec.versions) {
    const props = v.schema.openAPIV3Schema.properties.spec.properties;
    delete props.ageThreshold['x-kubernetes-validations'];
    delete props.surge.properties.maxUnavailable.maximum;
  }
  kubectl(['apply', '--server-side', '--force-conflicts', '-f', '-'], stringify(crd));
  return installNoderotation;
}

interface SpecProps {
  ageThreshold: Record<string, unknown>;
  surge: { properties: { maxUnavailable: Record<string, unknown> } };
}

/**
 * A NodeClaim in `pool` that Karpenter is launching and that has not registered (no node, no providerID): its
 * requirements name no instance type, which the kwok provider needs to launch, so every attempt fails with an
 * ordinary launch error (Launched=Unknown, LaunchFailed) and Karpenter retries until its 5-minute launch timeout
 * — as a claim whose cloud launch is failing for a while. Owned by the NodePool, as Karpenter's claims are.
 */
export async function unlaunchedClaim(kube: Kube, pool: string): Promise<NodeClaim> {
  const owner = await kube.getNodePool(pool);
  if (!owner?.metadata.uid) throw new Error(`NodePool ${pool} not found`);
  const created = (await kube.custom.createClusterCustomObject({
    group: 'karpenter.sh',
    version: 'v1',
    plural: 'nodeclaims',
    body: {
      apiVersion: 'karpenter.sh/v1',
      kind: 'NodeClaim',
      metadata: {
        generateName: `${pool}-`,
        labels: { [NODEPOOL_LABEL]: pool },
        ownerReferences: [
          {
            apiVersion: 'karpenter.sh/v1',
            kind: 'NodePool',
            name: pool,
            uid: owner.metadata.uid,
            blockOwnerDeletion: true,
          },
        ],
      },
      spec: {
        nodeClassRef: { group: 'karpenter.kwok.sh', kind: 'KWOKNodeClass', name: 'default' },
        requirements: ON_DEMAND_AMD64.requirements,
        resources: { requests: { cpu: '1' } },
        expireAfter: '720h',
      },
    },
  })) as NodeClaim;
  const name = created.metadata.name;
  return waitFor(`Karpenter's first attempt to launch ${name} failed`, async () => {
    const c = await kube.getNodeClaim(name);
    const launched = c?.status?.conditions?.find((x) => x.type === 'Launched');
    return launched?.status === 'Unknown' && launched.reason === 'LaunchFailed' ? c : undefined;
  });
}
