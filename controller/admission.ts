// Admission as defence in depth (issue 17): ValidatingAdmissionPolicies that hold the controller's ServiceAccount
// to the writes it means to make, so that one wrong write can never remove a node. Deleting a NodeClaim takes two
// writes, the first visible: the claim must already carry our mark (noderotation.io/state: draining on the old
// claim of a rotation, noderotation.io/surge-for on a surge claim) when the delete arrives. RBAC says which verbs
// the controller may use on which resources (controller/rbac.ts); these policies say what those writes may change.
//
// One policy per resource (Nodes, NodeClaims, NodePools, Pods), each with its binding (validationActions: Deny),
// so that every expression is type-checked against that one resource's schema by the apiserver (a policy that
// matched several kinds would report warnings for the fields that only some of them have). Each policy matches
// the controller's ServiceAccount only (matchConditions on request.userInfo.username): an admin's writes, and
// Karpenter's, are untouched. deploy/controller/admission.yaml and the chart's templates/admission.yaml are
// generated from here (`npm run generate`), and the e2e harness installs the same policies for every controller
// ServiceAccount it creates.
import { stringify } from 'yaml';
import { A } from '../src/engine/annotations.js';
import { DEFAULT_NAMESPACE, NAME } from './rbac.js';

export interface AdmissionTarget {
  /** The controller's namespace (its ServiceAccount's). */
  namespace: string;
  /** The controller's ServiceAccount. */
  serviceAccount: string;
  /** Prefix of the policies' and bindings' names (cluster-scoped); the ServiceAccount's name by default. */
  name?: string;
}

/** The annotations the controller may change on a Node (design §3.4), besides spec.unschedulable (its cordon). */
export const NODE_ANNOTATIONS = [A.surgeFor, A.doNotDisruptOwned, A.cordoned, A.doNotDisrupt] as const;

/**
 * Every field of a Node's spec (core/v1 NodeSpec, Kubernetes 1.34) but unschedulable: each must stay as it is. A
 * typed object's fields cannot be iterated in CEL, so they are named; test/install checks this list against the
 * NodeSpec of the Kubernetes schema the install checks use, so that a field added there shows up here.
 */
export const NODE_SPEC_FIELDS = ['podCIDR', 'podCIDRs', 'providerID', 'taints', 'configSource', 'externalID'] as const;

const OURS = 'noderotation.io/';

/** CEL string literal (every text here is written without a quote or backslash, so none needs escaping). */
const lit = (s: string): string => {
  if (/['\\]/.test(s)) throw new Error(`no quoting for ${s}`);
  return `'${s}'`;
};
const list = (xs: readonly string[]): string => `[${xs.map(lit).join(', ')}]`;

export interface Validation {
  /** The rule's name, at the start of every denial message. */
  rule: string;
  expression: string;
  /** What a denial says (messageExpression), and the fixed text should that expression fail. */
  messageExpression: string;
  message: string;
}

interface PolicySpec {
  suffix: string;
  apiGroup: string;
  resource: string;
  kind: string;
  variables: { name: string; expression: string }[];
  validations: Validation[];
}

const PREFIX = 'noderotation admission';
/** The start of every denial message: the rule, the operation and the object. */
const head = (rule: string, kind: string): string =>
  `'${PREFIX} rule ${rule}: ' + request.operation + ' of ${kind} ' + ` +
  `(request.namespace == '' ? '' : request.namespace + '/') + request.name + ` +
  `' by the noderotation controller refused: '`;
/** A denial's messageExpression: the head, `text`, and CEL `tail` (a string expression) when given. */
const says = (rule: string, kind: string, text: string, tail?: string): string =>
  `${head(rule, kind)} + ${lit(text)}${tail === undefined ? '' : ` + ${tail}`}`;
const fixed = (rule: string, what: string): string => `${PREFIX} rule ${rule}: ${what}`;

/** Variables every update rule uses: the annotation keys the request changes, and the metadata it must not. */
const COMMON_VARIABLES = [
  { name: 'oldAnnotations', expression: 'oldObject.metadata.?annotations.orValue({})' },
  { name: 'newAnnotations', expression: 'object.metadata.?annotations.orValue({})' },
  {
    name: 'changedAnnotations',
    expression:
      'variables.newAnnotations.filter(k, !(k in variables.oldAnnotations) || ' +
      'variables.oldAnnotations[k] != variables.newAnnotations[k]) + ' +
      'variables.oldAnnotations.filter(k, !(k in variables.newAnnotations))',
  },
  {
    name: 'metadataChanges',
    expression: ['labels', 'finalizers', 'ownerReferences']
      .map((f) => `(object.metadata.?${f} == oldObject.metadata.?${f} ? [] : ['metadata.${f}'])`)
      .join(' + '),
  },
];

/** `refused` (the list of what the request changes and may not) from spec changes and the foreign-key test. */
const refused = (specChanges: string, foreignKey: string): { name: string; expression: string }[] => [
  { name: 'specChanges', expression: specChanges },
  {
    name: 'refused',
    expression:
      'variables.metadataChanges + variables.specChanges + ' +
      `variables.changedAnnotations.filter(k, ${foreignKey}).map(k, 'annotation ' + k)`,
  },
];

/** Refuses one operation outright. */
const never = (rule: string, kind: string, operation: string, why: string): Validation => ({
  rule,
  expression: `request.operation != '${operation}'`,
  messageExpression: says(rule, kind, why),
  message: fixed(rule, why),
});

/** An update may change only what `allowed` describes; the message lists what else it changed. */
const updateOnly = (rule: string, kind: string, allowed: string): Validation => ({
  rule,
  expression: `request.operation != 'UPDATE' || size(variables.refused) == 0`,
  messageExpression: says(
    rule,
    kind,
    `it may change only ${allowed}; this request changes `,
    "variables.refused.join(', ')",
  ),
  message: fixed(rule, `the controller may change only ${allowed}`),
});

const NODE_ANNOTATION_LIST = NODE_ANNOTATIONS.join(', ');

export const POLICIES: PolicySpec[] = [
  {
    suffix: 'nodes',
    apiGroup: '',
    resource: 'nodes',
    kind: 'Node',
    variables: [
      ...COMMON_VARIABLES,
      ...refused(
        NODE_SPEC_FIELDS.map((f) => `(object.?spec.?${f} == oldObject.?spec.?${f} ? [] : ['spec.${f}'])`).join(' + '),
        `!(k in ${list(NODE_ANNOTATIONS)})`,
      ),
    ],
    validations: [
      never('node-create', 'Node', 'CREATE', 'the controller never creates a Node'),
      never('node-delete', 'Node', 'DELETE', 'the controller never deletes a Node (it deletes marked NodeClaims)'),
      updateOnly('node-update', 'Node', `spec.unschedulable and the annotations ${NODE_ANNOTATION_LIST}`),
    ],
  },
  {
    suffix: 'nodeclaims',
    apiGroup: 'karpenter.sh',
    resource: 'nodeclaims',
    kind: 'NodeClaim',
    variables: [
      ...COMMON_VARIABLES,
      ...refused(`(object.?spec == oldObject.?spec ? [] : ['spec'])`, `!k.startsWith(${lit(OURS)})`),
      {
        name: 'marked',
        expression:
          `oldObject.metadata.?annotations[?${lit(A.state)}].orValue('') == 'draining' || ` +
          `oldObject.metadata.?annotations[?${lit(A.surgeFor)}].orValue('') != ''`,
      },
    ],
    validations: [
      never('nodeclaim-create', 'NodeClaim', 'CREATE', 'the controller never creates a NodeClaim'),
      {
        rule: 'nodeclaim-delete',
        expression: `request.operation != 'DELETE' || variables.marked`,
        messageExpression: says(
          'nodeclaim-delete',
          'NodeClaim',
          'a NodeClaim is deleted only once an earlier write marked it: ' +
            `${A.state}: draining (the old claim of a rotation) or a non-empty ${A.surgeFor} (a surge claim); ` +
            `this one carries ${A.state}=`,
          `variables.oldAnnotations[?${lit(A.state)}].orValue('(none)') + ${lit(` and ${A.surgeFor}=`)} + ` +
            `variables.oldAnnotations[?${lit(A.surgeFor)}].orValue('(none)')`,
        ),
        message: fixed(
          'nodeclaim-delete',
          `the controller deletes a NodeClaim only when it carries ${A.state}: draining or ${A.surgeFor}`,
        ),
      },
      updateOnly('nodeclaim-update', 'NodeClaim', `annotations under ${OURS}`),
    ],
  },
  {
    suffix: 'nodepools',
    apiGroup: 'karpenter.sh',
    resource: 'nodepools',
    kind: 'NodePool',
    variables: [
      ...COMMON_VARIABLES,
      ...refused(
        `(object.?spec == oldObject.?spec ? [] : ['spec'])`,
        `!k.startsWith(${lit(OURS)}) || k == ${lit(A.freeze)}`,
      ),
    ],
    validations: [
      never('nodepool-create', 'NodePool', 'CREATE', 'the controller never creates a NodePool'),
      never(
        'nodepool-delete',
        'NodePool',
        'DELETE',
        'the controller never deletes a NodePool (that would remove every node of the pool)',
      ),
      updateOnly('nodepool-update', 'NodePool', `annotations under ${OURS} other than ${A.freeze} (set by operators)`),
    ],
  },
  {
    suffix: 'pods',
    apiGroup: '',
    resource: 'pods',
    kind: 'Pod',
    variables: [
      // system:serviceaccount:<namespace>:<name>: the matchCondition admits nothing else.
      { name: 'ownNamespace', expression: `request.userInfo.username.split(':')[2]` },
      {
        name: 'placeholder',
        expression:
          `(request.operation == 'DELETE' ? oldObject : object)` +
          `.metadata.?labels[?${lit(A.surgeFor)}].orValue('') != ''`,
      },
    ],
    validations: [
      {
        rule: 'pod-namespace',
        expression: 'request.namespace == variables.ownNamespace',
        messageExpression: says(
          'pod-namespace',
          'Pod',
          'the controller writes Pods only in its own namespace ',
          'variables.ownNamespace',
        ),
        message: fixed('pod-namespace', "the controller writes Pods only in its own ServiceAccount's namespace"),
      },
      {
        rule: 'pod-placeholder',
        expression: `request.operation == 'UPDATE' || variables.placeholder`,
        messageExpression: says(
          'pod-placeholder',
          'Pod',
          `the controller creates and deletes only surge placeholders (Pods labelled ${A.surgeFor})`,
        ),
        message: fixed('pod-placeholder', `the controller creates and deletes only Pods labelled ${A.surgeFor}`),
      },
      {
        rule: 'pod-preemption',
        expression: `request.operation != 'CREATE' || object.spec.?preemptionPolicy.orValue('') == 'Never'`,
        messageExpression: says(
          'pod-preemption',
          'Pod',
          'a surge placeholder never preempts: spec.preemptionPolicy must be Never, not ',
          "object.spec.?preemptionPolicy.orValue('unset')",
        ),
        message: fixed('pod-preemption', 'a surge placeholder must have spec.preemptionPolicy: Never'),
      },
      never('pod-update', 'Pod', 'UPDATE', 'the controller never updates a Pod'),
    ],
  },
];

const labels = { 'app.kubernetes.io/name': 'noderotation', 'app.kubernetes.io/component': 'controller' };

/** The username of a ServiceAccount's tokens. */
export const serviceAccountUser = (namespace: string, serviceAccount: string): string =>
  `system:serviceaccount:${namespace}:${serviceAccount}`;

/** The policies' names for a target, in the order admissionPolicy returns them. */
export const policyNames = (t: AdmissionTarget): string[] =>
  POLICIES.map((p) => `${t.name ?? t.serviceAccount}-${p.suffix}`);

/**
 * The ValidatingAdmissionPolicies and their bindings (policy, binding, policy, binding, …) that hold
 * `namespace/serviceAccount` to the writes of the controller.
 */
export function admissionPolicy(t: AdmissionTarget): Record<string, unknown>[] {
  const user = serviceAccountUser(t.namespace, t.serviceAccount);
  const names = policyNames(t);
  return POLICIES.flatMap((p, i) => {
    const name = names[i] as string;
    return [
      {
        apiVersion: 'admissionregistration.k8s.io/v1',
        kind: 'ValidatingAdmissionPolicy',
        metadata: { name, labels },
        spec: {
          failurePolicy: 'Fail',
          matchConstraints: {
            resourceRules: [
              {
                apiGroups: [p.apiGroup],
                apiVersions: ['v1'],
                operations: ['CREATE', 'UPDATE', 'DELETE'],
                resources: [p.resource],
              },
            ],
          },
          matchConditions: [
            { name: 'controller-serviceaccount', expression: `request.userInfo.username == ${lit(user)}` },
          ],
          variables: p.variables,
          validations: p.validations.map((v) => ({
            expression: v.expression,
            messageExpression: v.messageExpression,
            message: v.message,
            reason: 'Forbidden',
          })),
        },
      },
      {
        apiVersion: 'admissionregistration.k8s.io/v1',
        kind: 'ValidatingAdmissionPolicyBinding',
        metadata: { name, labels },
        spec: { policyName: name, validationActions: ['Deny'] },
      },
    ];
  });
}

export const admissionDocs = (manifests: Record<string, unknown>[]): string =>
  manifests.map((m) => `---\n${stringify(m, { lineWidth: 0 })}`).join('');

export function admissionYaml(namespace = DEFAULT_NAMESPACE): string {
  const header =
    '# Generated from controller/admission.ts by `npm run generate`; do not edit. The rules and their reasons are\n' +
    '# there; docs/operations.md#admission-policy says how to read a denial and how to turn the policies off.\n';
  return header + admissionDocs(admissionPolicy({ namespace, serviceAccount: NAME }));
}
