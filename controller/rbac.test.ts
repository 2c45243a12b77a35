import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { RBAC_FILE } from './generate.js';
import { CLUSTER_RULES, NAMESPACE_RULES, rbacYaml } from './rbac.js';

describe('controller RBAC', () => {
  it('deploy/controller/rbac.yaml is generated from controller/rbac.ts (run `npm run generate`)', () => {
    expect(readFileSync(RBAC_FILE, 'utf8')).toBe(rbacYaml());
  });

  it('least privilege: no wildcard, no secrets, no update of whole objects, Pods written only in our namespace', () => {
    for (const r of [...CLUSTER_RULES, ...NAMESPACE_RULES]) {
      expect(r.verbs).not.toContain('*');
      expect(r.resources).not.toContain('*');
      expect(r.resources).not.toContain('secrets');
      expect(r.why.length).toBeGreaterThan(10);
    }
    const clusterPods = CLUSTER_RULES.filter((r) => r.resources.includes('pods')).flatMap((r) => r.verbs);
    expect(clusterPods).toEqual(['list']);
    expect(CLUSTER_RULES.flatMap((r) => r.verbs)).not.toContain('update');
  });
});
