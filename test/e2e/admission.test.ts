// The admission policies of controller/admission.ts on the real apiserver: installed by the e2e harness for a
// controller ServiceAccount (as for every controller the suite runs), they refuse, with a 403 naming the rule, the
// writes the controller must never make, made with that ServiceAccount's token and the controller's own client;
// they let through the writes it does make; an admin's writes are untouched; and with the bindings removed the
// refused writes would pass (a server-side dry-run with the same token), so each refusal is the policy's, not RBAC's.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { policyNames } from '../../controller/admission.js';
import { ApiError, KubeClient, type Json } from '../../runtime/kube/client.js';
import { loadKubeconfigFile } from '../../runtime/kube/kubeconfig.js';
import { A } from '../../src/engine/annotations.js';
import type { NodeClaim } from '../../src/karpenter/types.js';
import type { Pod } from '../../src/kube/types.js';
import { fakeContainer, onPool, useCluster } from './helpers/context.js';
import { kubectl, kubectlResult } from './helpers/kubectl.js';
import { conditionTrue, nodeReady, TestResources, waitFor } from './helpers/k8s.js';
import {
  admissionProbes,
  enginePlaceholder,
  installNoderotation,
  serviceAccountKubeconfig,
} from './helpers/noderotation-api.js';

const MERGE = 'application/merge-patch+json';
const DETAIL_FALLS_BACK = new Set(['node-update', 'nodeclaim-update', 'nodeclaim-delete', 'nodepool-update']);
const NODES = '/api/v1/nodes';
const CLAIMS = '/apis/karpenter.sh/v1/nodeclaims';
const POOLS = '/apis/karpenter.sh/v1/nodepools';
const pods = (ns: string) => `/api/v1/namespaces/${ns}/pods`;

describe('the admission policies, for the controller ServiceAccount, on the real apiserver', () => {
  const { kube } = useCluster();
  // Shared by every test of the file (the pool's three nodes take a minute to come up): cleaned up after all.
  const res = new TestResources(kube);
  let ns: string;
  let other: string;
  let sa: string;
  let pool: string;
  let claims: NodeClaim[];
  let client: KubeClient;
  let admin: KubeClient;
  let cleanup: () => void;

  /** A write by the controller's ServiceAccount; resolves to the status and what the API said. */
  async function write(
    method: string,
    path: string,
    body?: unknown,
    query: Record<string, string> = {},
  ): Promise<{ status: number; message: string }> {
    try {
      await client.request(method, path, { body, query, ...(method === 'PATCH' ? { contentType: MERGE } : {}) });
      return { status: 200, message: '' };
    } catch (e) {
      if (e instanceof ApiError) return { status: e.status, message: e.message };
      throw e;
    }
  }

  /** The write is refused by the policy: 403, and the message names the rule and what was refused. */
  async function refused(rule: string, what: string, method: string, path: string, body?: unknown): Promise<void> {
    const r = await write(method, path, body);
    expect(r.status, r.message).toBe(403);
    expect(r.message).toContain(`denied request: noderotation admission rule ${rule}: `);
    // On the 1.34 apiserver the detailed messageExpression of node-update, nodeclaim-delete and nodepool-update
    // falls back to the rule's fixed message (cause not found yet; cel-go evaluates them): `what` is checked
    // where the detail arrives.
    if (!DETAIL_FALLS_BACK.has(rule)) expect(r.message).toContain(what);
  }

  async function allowed(method: string, path: string, body?: unknown): Promise<void> {
    const r = await write(method, path, body);
    expect(r, r.message).toEqual({ status: 200, message: '' });
  }

  const deleteOptions = (uid?: string) => ({
    apiVersion: 'v1',
    kind: 'DeleteOptions',
    ...(uid ? { preconditions: { uid } } : {}),
  });

  /** A surge placeholder as the engine builds it, in `namespace`, under the installed PriorityClass. */
  const placeholder = (namespace: string, claim: string): Pod =>
    enginePlaceholder(namespace, 'noderotation-placeholder', claim);

  /** An unlabelled Pod (no placeholder). */
  const plainPod = (namespace: string, name: string) => ({
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, namespace },
    spec: { containers: [fakeContainer('10m')], nodeSelector: { 'e2e-admission': 'nowhere' } },
  });

  const node = async (i: number) => (await kube.getNode(claims[i]!.status!.nodeName!))!;

  beforeAll(async () => {
    await installNoderotation();
    ns = await res.namespace('e2e-adm');
    other = await res.namespace('e2e-adm-other');
    const identity = await serviceAccountKubeconfig(ns);
    cleanup = identity.cleanup;
    client = new KubeClient(loadKubeconfigFile(identity.kubeconfig));
    admin = new KubeClient(loadKubeconfigFile(kube.env.kubeconfig));
    sa = `nr-ctl-${ns}`.slice(0, 63);
    // Pods in the other namespace too, for this test only: a placeholder written there is then the policy's to refuse.
    kubectl(
      ['apply', '-f', '-'],
      [
        {
          apiVersion: 'rbac.authorization.k8s.io/v1',
          kind: 'Role',
          metadata: { name: 'e2e-admission', namespace: other },
          rules: [{ apiGroups: [''], resources: ['pods'], verbs: ['create', 'delete'] }],
        },
        {
          apiVersion: 'rbac.authorization.k8s.io/v1',
          kind: 'RoleBinding',
          metadata: { name: 'e2e-admission', namespace: other },
          roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'e2e-admission' },
          subjects: [{ kind: 'ServiceAccount', name: sa, namespace: ns }],
        },
      ]
        .map((m) => `---\n${stringify(m)}`)
        .join(''),
    );
    // Three nodes: one app Pod on each (hostname anti-affinity), one-cpu instances.
    pool = await res.nodePool('e2e-adm', {
      requirements: [
        { key: 'node.kubernetes.io/instance-type', operator: 'In', values: ['c-1x-amd64-linux'] },
        { key: 'karpenter.sh/capacity-type', operator: 'In', values: ['on-demand'] },
      ],
    });
    const labels = { app: 'spread' };
    await kube.apps.createNamespacedDeployment({
      namespace: ns,
      body: {
        metadata: { name: 'spread', labels },
        spec: {
          replicas: 3,
          selector: { matchLabels: labels },
          template: {
            metadata: { labels },
            spec: {
              nodeSelector: onPool(pool),
              terminationGracePeriodSeconds: 1,
              affinity: {
                podAntiAffinity: {
                  requiredDuringSchedulingIgnoredDuringExecution: [
                    { labelSelector: { matchLabels: labels }, topologyKey: 'kubernetes.io/hostname' },
                  ],
                },
              },
              containers: [fakeContainer('100m')],
            },
          },
        },
      },
    });
    claims = await waitFor(
      'three Ready NodeClaims with Ready Nodes',
      async () => {
        const cs = (await kube.nodeClaims(pool)).filter((c) => conditionTrue(c, 'Ready') && c.status?.nodeName);
        if (cs.length < 3) return undefined;
        const ready = await Promise.all(cs.map(async (c) => nodeReady(await kube.getNode(c.status!.nodeName!))));
        return ready.every(Boolean) ? cs.slice(0, 3) : undefined;
      },
      { timeoutMs: 240_000 },
    );
  });

  afterAll(async () => {
    cleanup?.();
    await res.cleanup();
  });

  it('are type-checked against each resource without a warning', async () => {
    for (const name of policyNames({ namespace: ns, serviceAccount: sa })) {
      const policy = await waitFor(`${name} type-checked`, () => {
        const p = JSON.parse(kubectl(['get', 'validatingadmissionpolicy', name, '-o', 'json'])) as {
          metadata: { generation: number };
          status?: { observedGeneration?: number; typeChecking?: { expressionWarnings?: unknown[] } };
        };
        return p.status?.observedGeneration === p.metadata.generation ? p : undefined;
      });
      expect(policy.status?.typeChecking?.expressionWarnings ?? [], name).toEqual([]);
    }
  });

  it('Nodes: labels, taints and foreign annotations refused; spec.unschedulable and our markers allowed', async () => {
    const n = await node(0);
    const path = `${NODES}/${n.metadata!.name!}`;
    await refused('node-update', 'this request changes metadata.labels', 'PATCH', path, {
      metadata: { labels: { 'e2e-admission': 'changed' } },
    });
    await refused('node-update', 'this request changes spec.taints', 'PATCH', path, {
      spec: { taints: [...(n.spec?.taints ?? []), { key: 'e2e-admission', effect: 'NoSchedule' }] },
    });
    await refused('node-update', 'this request changes annotation example.com/foreign', 'PATCH', path, {
      metadata: { annotations: { 'example.com/foreign': 'x' } },
    });
    // All or nothing: our marker beside a label is refused too.
    await refused('node-update', 'this request changes metadata.labels', 'PATCH', path, {
      metadata: { labels: { 'e2e-admission': 'changed' }, annotations: { [A.cordoned]: 'true' } },
    });
    // The controller's own writes: the cordon, the freeze markers, then their removal (executor.ts's patches).
    const markers = {
      [A.surgeFor]: claims[1]!.metadata.name,
      [A.doNotDisruptOwned]: 'true',
      [A.cordoned]: 'true',
      [A.doNotDisrupt]: 'true',
    };
    await allowed('PATCH', path, { spec: { unschedulable: true }, metadata: { annotations: markers } });
    const marked = await node(0);
    expect(marked.spec?.unschedulable).toBe(true);
    expect(marked.metadata?.annotations).toMatchObject(markers);
    await allowed('PATCH', path, {
      spec: { unschedulable: null },
      metadata: { annotations: Object.fromEntries(Object.keys(markers).map((k) => [k, null])) },
    });
    const unmarked = await node(0);
    expect(unmarked.spec?.unschedulable).toBeUndefined();
    for (const k of Object.keys(markers)) expect(unmarked.metadata?.annotations?.[k]).toBeUndefined();
    expect(unmarked.metadata?.labels?.['e2e-admission']).toBeUndefined();
    expect(unmarked.spec?.taints?.some((t) => t.key === 'e2e-admission') ?? false).toBe(false);
  });

  it('NodeClaims: a delete needs our mark (state draining or surge-for) first; only our annotations', async () => {
    const [unmarked, old, surge] = claims as [NodeClaim, NodeClaim, NodeClaim];
    const at = (c: NodeClaim) => `${CLAIMS}/${c.metadata.name}`;
    await refused('nodeclaim-delete', `${A.state}=(none) and ${A.surgeFor}=(none)`, 'DELETE', at(unmarked), {
      ...deleteOptions(unmarked.metadata.uid),
    });
    await refused('nodeclaim-update', 'this request changes metadata.labels', 'PATCH', at(unmarked), {
      metadata: { labels: { 'e2e-admission': 'changed' } },
    });
    await refused(
      'nodeclaim-update',
      'this request changes annotation karpenter.sh/do-not-disrupt',
      'PATCH',
      at(unmarked),
      {
        metadata: { annotations: { [A.doNotDisrupt]: 'true' } },
      },
    );
    // A mark of ours that is not one of the two: pending is no licence to delete.
    await allowed('PATCH', at(unmarked), { metadata: { annotations: { [A.state]: 'pending' } } });
    await refused(
      'nodeclaim-delete',
      `${A.state}=pending`,
      'DELETE',
      at(unmarked),
      deleteOptions(unmarked.metadata.uid),
    );
    await allowed('PATCH', at(unmarked), { metadata: { annotations: { [A.state]: null } } });

    // The old claim of a rotation: marked draining by one write, deleted by the next.
    await allowed('PATCH', at(old), { metadata: { annotations: { [A.state]: 'draining' } } });
    await allowed('DELETE', at(old), deleteOptions(old.metadata.uid));
    // A surge claim: linked to its rotation by one write, reaped by the next.
    await allowed('PATCH', at(surge), { metadata: { annotations: { [A.surgeFor]: old.metadata.name } } });
    await allowed('DELETE', at(surge), deleteOptions(surge.metadata.uid));
    for (const c of [old, surge]) {
      const now = await kube.getNodeClaim(c.metadata.name);
      expect(now === undefined || now.metadata.deletionTimestamp !== undefined, c.metadata.name).toBe(true);
    }
    expect((await kube.getNodeClaim(unmarked.metadata.name))?.metadata.deletionTimestamp).toBeUndefined();
  });

  it('Pods: our labelled placeholder in our namespace only; elsewhere, unlabelled or preempting refused', async () => {
    await refused('pod-namespace', `own namespace ${ns}`, 'POST', pods(other), placeholder(other, 'other-ns'));
    await refused(
      'pod-placeholder',
      'Pods labelled noderotation.io/surge-for',
      'POST',
      pods(ns),
      plainPod(ns, 'plain'),
    );
    const preempting = placeholder(ns, 'preempting');
    delete preempting.spec.priorityClassName;
    delete preempting.spec.preemptionPolicy;
    await refused('pod-preemption', 'must be Never, not PreemptLowerPriority', 'POST', pods(ns), preempting);

    const ph = placeholder(ns, 'mine');
    await allowed('POST', pods(ns), ph);
    expect(await kube.getPod(ns, ph.metadata.name)).toBeDefined();
    // Delete: only placeholders, only here. An admin's Pod in our namespace is not ours to delete.
    await admin.request('POST', pods(ns), { body: plainPod(ns, 'admins') });
    await refused('pod-placeholder', 'only surge placeholders', 'DELETE', `${pods(ns)}/admins`, deleteOptions());
    await allowed('DELETE', `${pods(ns)}/${ph.metadata.name}`, deleteOptions());
  });

  it("NodePools: our annotations allowed; the operator's freeze and the spec refused", async () => {
    const at = `${POOLS}/${pool}`;
    await refused('nodepool-update', `this request changes annotation ${A.freeze}`, 'PATCH', at, {
      metadata: { annotations: { [A.freeze]: '2099-01-01T00:00:00Z' } },
    });
    await refused('nodepool-update', 'this request changes spec', 'PATCH', at, { spec: { weight: 7 } });
    await allowed('PATCH', at, { metadata: { annotations: { [A.lastRotationAt]: '2026-01-01T00:00:00Z' } } });
    await allowed('PATCH', at, { metadata: { annotations: { [A.lastRotationAt]: null } } });
  });

  it("leave an admin's writes untouched", async () => {
    const n = await node(0);
    await admin.request('PATCH', `${NODES}/${n.metadata!.name!}`, {
      contentType: MERGE,
      body: { metadata: { labels: { 'e2e-admission': 'admin' } } },
    });
    expect((await node(0)).metadata?.labels?.['e2e-admission']).toBe('admin');
    await admin.request('PATCH', `${POOLS}/${pool}`, {
      contentType: MERGE,
      body: { metadata: { annotations: { [A.freeze]: '2000-01-01T00:00:00Z' } } },
    });
    expect((await kube.getNodePool(pool))?.metadata.annotations?.[A.freeze]).toBe('2000-01-01T00:00:00Z');
    await admin.request('PATCH', `${POOLS}/${pool}`, {
      contentType: MERGE,
      body: { metadata: { annotations: { [A.freeze]: null } } },
    });
  });

  it('without the bindings the same token may make each refused write (RBAC allows it)', async () => {
    const names = policyNames({ namespace: ns, serviceAccount: sa });
    kubectl(['delete', 'validatingadmissionpolicybinding', ...names]);
    // Until the apiserver drops them, a probe is still refused.
    await waitFor('the policies no longer enforced', () => admissionProbes(ns, sa).every((r) => !r));
    const dry = { dryRun: 'All' };
    const n = await node(0);
    const unmarked = claims[0]!;
    const passes = async (method: string, path: string, body: unknown) => {
      // A DELETE's options come from its body when it has one: the dry-run goes there too.
      const r = await write(method, path, method === 'DELETE' ? { ...(body as object), dryRun: ['All'] } : body, dry);
      expect(r, `${method} ${path}: ${r.message}`).toEqual({ status: 200, message: '' });
    };
    await passes('PATCH', `${NODES}/${n.metadata!.name!}`, { metadata: { labels: { 'e2e-admission': 'sa' } } });
    await passes('PATCH', `${NODES}/${n.metadata!.name!}`, {
      spec: { taints: [...(n.spec?.taints ?? []), { key: 'e2e-admission', effect: 'NoSchedule' }] },
    });
    await passes('PATCH', `${NODES}/${n.metadata!.name!}`, {
      metadata: { annotations: { 'example.com/foreign': 'x' } },
    });
    await passes('DELETE', `${CLAIMS}/${unmarked.metadata.name}`, deleteOptions(unmarked.metadata.uid));
    await passes('PATCH', `${CLAIMS}/${unmarked.metadata.name}`, { metadata: { labels: { 'e2e-admission': 'sa' } } });
    await passes('POST', pods(other), placeholder(other, 'other-ns'));
    await passes('POST', pods(ns), plainPod(ns, 'plain'));
    await passes('DELETE', `${pods(ns)}/admins`, deleteOptions());
    await passes('PATCH', `${POOLS}/${pool}`, { metadata: { annotations: { [A.freeze]: '2099-01-01T00:00:00Z' } } });
    // The dry-runs stored nothing.
    expect((await kube.getNodeClaim(unmarked.metadata.name))?.metadata.deletionTimestamp).toBeUndefined();
    expect((await kube.getNodePool(pool))?.metadata.annotations?.[A.freeze]).toBeUndefined();
    const json = (await admin.request<Json>('GET', `${NODES}/${n.metadata!.name!}`)) as {
      metadata: { labels: Record<string, string> };
    };
    expect(json.metadata.labels['e2e-admission']).toBe('admin');
    expect(kubectlResult(['get', 'pod', 'plain', '-n', ns]).code).not.toBe(0);
  });
});
