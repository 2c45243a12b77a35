// Every permission the controller uses, in one reviewed place, next to the code that makes the calls.
// deploy/controller/rbac.yaml is generated from this list (`npm run generate`; a test fails when it is stale),
// and the e2e suite runs the controller under exactly these rules, so a call missing here fails there.
import { stringify } from 'yaml';

export interface Rule {
  apiGroups: string[];
  resources: string[];
  verbs: string[];
  /** Why the controller needs it: reviewed with every change. */
  why: string;
}

/** Cluster-wide: the objects it watches and acts on, and the Pods of the nodes a rotation involves. */
export const CLUSTER_RULES: Rule[] = [
  {
    apiGroups: ['noderotation.io'],
    resources: ['rotationpolicies'],
    verbs: ['get', 'list', 'watch'],
    why: 'the policies are its input',
  },
  {
    apiGroups: ['noderotation.io'],
    resources: ['rotationpolicies/status'],
    verbs: ['patch'],
    why: 'conditions, matched and rotating NodePools',
  },
  {
    apiGroups: ['karpenter.sh'],
    resources: ['nodepools'],
    verbs: ['get', 'list', 'watch', 'patch'],
    why: 'the rotation anchor and its state live in NodePool annotations',
  },
  {
    apiGroups: ['karpenter.sh'],
    resources: ['nodeclaims'],
    verbs: ['get', 'list', 'watch', 'patch', 'delete'],
    why: 'per-claim state annotations; deleting the old claim starts its graceful drain',
  },
  {
    apiGroups: [''],
    resources: ['nodes'],
    verbs: ['get', 'list', 'watch', 'patch'],
    why: 'cordon and the do-not-disrupt / surge-for markers',
  },
  {
    apiGroups: [''],
    resources: ['pods'],
    verbs: ['list'],
    why: 'the Pods on the nodes a rotation involves (field selector spec.nodeName), for sizing and reap guards',
  },
  {
    apiGroups: ['scheduling.k8s.io'],
    resources: ['priorityclasses'],
    verbs: ['list', 'watch'],
    why: 'a placeholder naming a missing PriorityClass is refused: no rotation starts, the status says why',
  },
  {
    apiGroups: ['events.k8s.io'],
    resources: ['events'],
    verbs: ['create', 'patch'],
    why: 'events about NodePools, NodeClaims and Nodes must live in default, about placeholders in our namespace',
  },
];

/** In the controller's namespace: its placeholders and its Lease. */
export const NAMESPACE_RULES: Rule[] = [
  {
    apiGroups: [''],
    resources: ['pods'],
    verbs: ['get', 'list', 'watch', 'create', 'delete'],
    why: 'the surge placeholder Pods',
  },
  {
    apiGroups: ['coordination.k8s.io'],
    resources: ['leases'],
    verbs: ['get', 'create', 'update'],
    why: 'leader election',
  },
];

export const NAME = 'noderotation-controller';

const toRule = (r: Rule) => ({ apiGroups: r.apiGroups, resources: r.resources, verbs: r.verbs });

/**
 * The RBAC manifests: ServiceAccount, ClusterRole + binding, Role + binding in `namespace`. `name` names all
 * five (the e2e tests give each run its own, so that parallel namespaces never share a binding).
 */
export function rbacManifests(namespace: string, name = NAME, serviceAccount = name): Record<string, unknown>[] {
  const labels = { 'app.kubernetes.io/name': 'noderotation', 'app.kubernetes.io/component': 'controller' };
  const subject = [{ kind: 'ServiceAccount', name: serviceAccount, namespace }];
  return [
    { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: serviceAccount, namespace, labels } },
    {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'ClusterRole',
      metadata: { name, labels },
      rules: CLUSTER_RULES.map(toRule),
    },
    {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'ClusterRoleBinding',
      metadata: { name, labels },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name },
      subjects: subject,
    },
    {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'Role',
      metadata: { name, namespace, labels },
      rules: NAMESPACE_RULES.map(toRule),
    },
    {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'RoleBinding',
      metadata: { name, namespace, labels },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name },
      subjects: subject,
    },
  ];
}

export const DEFAULT_NAMESPACE = 'node-rotation-system';

export function rbacYaml(namespace = DEFAULT_NAMESPACE): string {
  const header = '# Generated from controller/rbac.ts by `npm run generate`; do not edit. Each rule says why there.\n';
  return (
    header +
    rbacManifests(namespace)
      .map((m) => `---\n${stringify(m)}`)
      .join('')
  );
}
