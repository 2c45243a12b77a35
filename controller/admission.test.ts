import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { A } from '../src/engine/annotations.js';
import { cordon, freeze, unfreeze } from '../src/engine/markers.js';
import type { Node } from '../src/kube/types.js';
import { admissionPolicy, admissionYaml, NODE_ANNOTATIONS, POLICIES, policyNames } from './admission.js';
import { ADMISSION_FILE } from './generate.js';

type Doc = { kind: string; metadata: { name: string }; spec: Record<string, unknown> };
type Policy = Doc & {
  spec: {
    failurePolicy: string;
    matchConditions: { name: string; expression: string }[];
    matchConstraints: { resourceRules: { resources: string[]; operations: string[] }[] };
    validations: { expression: string; message: string; messageExpression: string; reason: string }[];
    variables: { name: string; expression: string }[];
  };
};

const docs = admissionPolicy({ namespace: 'nr-ns', serviceAccount: 'nr-sa' }) as Doc[];
const policies = docs.filter((d) => d.kind === 'ValidatingAdmissionPolicy') as Policy[];

describe('the admission policies', () => {
  it('deploy/controller/admission.yaml is generated from controller/admission.ts (run `npm run generate`)', () => {
    expect(readFileSync(ADMISSION_FILE, 'utf8')).toBe(admissionYaml());
  });

  it('one policy per resource, each bound with validationActions Deny, failing closed', () => {
    expect(policies.map((p) => p.spec.matchConstraints.resourceRules.flatMap((r) => r.resources))).toEqual([
      ['nodes'],
      ['nodeclaims'],
      ['nodepools'],
      ['pods'],
    ]);
    expect(policies.map((p) => p.metadata.name)).toEqual(policyNames({ namespace: 'nr-ns', serviceAccount: 'nr-sa' }));
    for (const p of policies) {
      expect(p.spec.failurePolicy).toBe('Fail');
      expect(p.spec.matchConstraints.resourceRules[0]!.operations).toEqual(['CREATE', 'UPDATE', 'DELETE']);
      const binding = docs.find(
        (d) => d.kind === 'ValidatingAdmissionPolicyBinding' && d.metadata.name === p.metadata.name,
      );
      expect(binding?.spec).toEqual({ policyName: p.metadata.name, validationActions: ['Deny'] });
    }
  });

  it("match the controller's ServiceAccount only, by its exact user name", () => {
    for (const p of policies)
      expect(p.spec.matchConditions).toEqual([
        {
          name: 'controller-serviceaccount',
          expression: "request.userInfo.username == 'system:serviceaccount:nr-ns:nr-sa'",
        },
      ]);
    const named = admissionPolicy({ namespace: 'a', serviceAccount: 'b', name: 'c' }) as Doc[];
    expect(named.map((d) => d.metadata.name)).toContain('c-pods');
  });

  it('every denial is Forbidden and names its rule, each rule once', () => {
    const rules = POLICIES.flatMap((p) => p.validations.map((v) => v.rule));
    expect(new Set(rules).size).toBe(rules.length);
    expect(rules).toEqual(
      expect.arrayContaining([
        'node-update',
        'nodeclaim-delete',
        'nodeclaim-update',
        'nodepool-update',
        'pod-namespace',
      ]),
    );
    const validations = policies.flatMap((p) => p.spec.validations);
    expect(validations.map((v) => v.message.match(/^noderotation admission rule ([a-z-]+): /)?.[1])).toEqual(rules);
    validations.forEach((v, i) => {
      expect(v.reason).toBe('Forbidden');
      expect(v.messageExpression.startsWith(`'noderotation admission rule ${rules[i]!}: '`)).toBe(true);
    });
  });

  it('a NodeClaim delete needs one of our two marks on the claim as it stands', () => {
    const claims = policies[1]!;
    const marked = claims.spec.variables.find((v) => v.name === 'marked')?.expression;
    expect(marked).toBe(
      `oldObject.metadata.?annotations[?'${A.state}'].orValue('') == 'draining' || ` +
        `oldObject.metadata.?annotations[?'${A.surgeFor}'].orValue('') != ''`,
    );
    expect(claims.spec.validations.map((v) => v.expression)).toContain(
      "request.operation != 'DELETE' || variables.marked",
    );
  });

  it("the Node rule lets through every marker the engine writes on a Node, and nothing of the operator's", () => {
    const node: Node = { apiVersion: 'v1', kind: 'Node', metadata: { name: 'n', annotations: {} }, spec: {} };
    const written = new Set<string>();
    const ours: Node = {
      ...node,
      spec: { unschedulable: true },
      metadata: { name: 'n', annotations: { [A.doNotDisruptOwned]: 'true', [A.cordoned]: 'true' } },
    };
    for (const a of [...freeze(node, 'claim', 'why'), ...cordon(node, 'why'), ...unfreeze(ours, 'why')]) {
      if (a.type === 'annotate') [...Object.keys(a.set), ...a.remove].forEach((k) => written.add(k));
      if (a.type === 'cordon' || a.type === 'uncordon') written.add(A.cordoned);
    }
    expect([...written].sort()).toEqual([...NODE_ANNOTATIONS].sort());
    expect(NODE_ANNOTATIONS).not.toContain(A.freeze);
  });

  it('the NodePool rule keeps the freeze annotation out of reach, and every other key of ours within it', () => {
    const pools = policies[2]!;
    const refused = pools.spec.variables.find((v) => v.name === 'refused')?.expression;
    expect(refused).toContain(`!k.startsWith('noderotation.io/') || k == '${A.freeze}'`);
    for (const key of Object.values(A))
      if (key !== A.doNotDisrupt) expect(key.startsWith('noderotation.io/')).toBe(true);
  });
});
