// The live fleet before and after a change: the same claims simulated under both sides, and the difference.
import { describe, expect, it } from 'vitest';
import { claim, DAY, IN_WINDOW, nodePool, policy } from '../../test/support/fixtures.js';
import type { RotationPolicy } from '../generated/api-types.js';
import { scenarioOf, whatIf, type Side } from './what-if.js';

const source = { file: 'cluster (context test)', document: 1 };
const withSource = (p: RotationPolicy) => ({ ...p, source });
// Ten nodes of a 14-day pool, created a day apart: a steady fleet.
const claims = Array.from({ length: 10 }, (_, i) => claim(`c${i}`, { createdAt: IN_WINDOW - i * DAY }).claim);
const side = (policies: RotationPolicy[], pool = nodePool()): Side => ({
  policies: policies.map(withSource),
  plans: [],
  nodePools: [pool],
  nodeClaims: claims,
});

describe('simulate --from-cluster: before and after', () => {
  it('the fleet as a scenario: real ages, grouped, the policy’s settings without its targeting', () => {
    const s = scenarioOf(nodePool(), claims, policy(), IN_WINDOW, (30 * DAY) / 1000);
    expect(s.spec.fleet).toHaveLength(10);
    expect(s.spec.fleet[1]).toEqual({ count: 1, age: '24h0m0s', expireAfter: '336h' });
    expect(s.spec.policy).not.toHaveProperty('nodePools');
    expect(s.spec).toMatchObject({ mode: 'controller', duration: '720h0m0s', nodePool: { name: 'general' } });
    expect(scenarioOf(nodePool(), claims, null, IN_WINDOW, 86400).spec.mode).toBe('baseline');
  });

  it('no change: identical sides, no first change', () => {
    const [p] = whatIf(side([policy()]), side([policy()]), IN_WINDOW, (30 * DAY) / 1000);
    expect(p?.before).toEqual(p?.after);
    expect(p?.firstChange).toBeNull();
    expect(p?.before.forcefulExpirations).toBe(0);
    expect(p?.before.graceful).toBeGreaterThan(0);
  });

  it('suspending the policy: Karpenter expires what the controller rotated, from the first rotation on', () => {
    const suspended = { ...policy(), spec: { ...policy().spec, suspend: true } };
    const [p] = whatIf(side([policy()]), side([suspended]), IN_WINDOW, (30 * DAY) / 1000);
    expect(p?.before.nodesAtRisk).toBe(0);
    expect(p?.after.nodesAtRisk).toBe(10);
    expect(p?.after.graceful).toBe(0);
    expect(p?.firstChange).not.toBeNull();
    expect(Date.parse(p!.firstChange!)).toBeGreaterThanOrEqual(IN_WINDOW);
  });

  it('a pool the change leaves ungoverned is simulated as Karpenter alone', () => {
    const [p] = whatIf(side([policy()]), side([]), IN_WINDOW, (30 * DAY) / 1000);
    expect(p?.after).toMatchObject({ policy: null, graceful: 0, rotationsPerWindow: null, nodesAtRisk: 10 });
  });
});
