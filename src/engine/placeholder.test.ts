import { describe, expect, it } from 'vitest';
import { claim, nodePool, OLD, workload } from '../../test/support/fixtures.js';
import type { NodeClaim } from '../karpenter/types.js';
import { resolveRequirement, sizePlaceholder } from './placeholder.js';

const GI = 2 ** 30;
const { claim: cand, node } = claim('old', { createdAt: OLD });
const ds = (name: string, req: Record<string, string>) =>
  workload(name, 'node-old', req, {
    metadata: {
      name,
      namespace: 'kube-system',
      ownerReferences: [{ apiVersion: 'apps/v1', kind: 'DaemonSet', name: 'ds' }],
    },
  });

describe('placeholder sizing (§3.3)', () => {
  it('sums reschedulable Pods and excludes DaemonSet, mirror, completed and hostname-pinned Pods', () => {
    const pods = [
      workload('a', 'node-old', { cpu: '500m', memory: '1Gi' }),
      workload('b', 'node-old', { cpu: '1', memory: '1Gi' }),
      ds('ds-1', { cpu: '100m', memory: '128Mi' }),
      workload(
        'mirror',
        'node-old',
        { cpu: '1' },
        { metadata: { name: 'mirror', annotations: { 'kubernetes.io/config.mirror': 'x' } } },
      ),
      workload('done', 'node-old', { cpu: '1' }, { status: { phase: 'Succeeded' } }),
      workload(
        'pinned',
        'node-old',
        { cpu: '1' },
        {
          spec: {
            containers: [{ name: 'c', resources: { requests: { cpu: '1' } } }],
            nodeSelector: { 'kubernetes.io/hostname': 'node-old' },
          },
        },
      ),
    ];
    const s = sizePlaceholder(cand, pods, false);
    expect(s).toMatchObject({
      kind: 'fits',
      requests: { cpu: 1.5, memory: 2 * GI },
      excluded: { daemonSet: 1, mirror: 1, completed: 1, nodePinned: 1 },
    });
  });

  it('counts init containers as the max, not the sum', () => {
    const pod = workload('a', 'node-old', { cpu: '1' });
    pod.spec.initContainers = [{ name: 'i', resources: { requests: { cpu: '3' } } }];
    expect(sizePlaceholder(cand, [pod], false).requests.cpu).toBe(3);
  });

  it('clamps to allocatable − DaemonSet overhead, warning only beyond the band', () => {
    const pods = [workload('big', 'node-old', { cpu: '3950m' }), ds('ds', { cpu: '100m' })];
    const small = sizePlaceholder(cand, pods, false);
    expect(small).toMatchObject({ kind: 'clamped', requests: { cpu: 3.9 }, bandExceeded: [] });
    const huge = sizePlaceholder(cand, [workload('big', 'node-old', { cpu: '5' }), ds('ds', { cpu: '100m' })], false);
    expect(huge).toMatchObject({ kind: 'clamped', requests: { cpu: 3.9 }, bandExceeded: ['cpu'] });
  });

  it('is refused when DaemonSets exhaust allocatable: the full request is kept', () => {
    const s = sizePlaceholder(cand, [workload('a', 'node-old', { cpu: '1' }), ds('ds', { cpu: '4' })], false);
    expect(s).toMatchObject({ kind: 'refused', requests: { cpu: 1 }, exhausted: ['cpu'] });
  });

  it('does not clamp without status.allocatable', () => {
    const bare: NodeClaim = { ...cand, status: { ...cand.status, allocatable: undefined } };
    expect(sizePlaceholder(bare, [workload('a', 'node-old', { cpu: '9' })], false)).toMatchObject({
      kind: 'fits',
      requests: { cpu: 9 },
    });
  });

  it('whole-node reservation asks for the whole cpu and memory limit', () => {
    const s = sizePlaceholder(
      cand,
      [workload('a', 'node-old', { cpu: '1' }), ds('ds', { cpu: '500m', memory: '1Gi' })],
      true,
    );
    expect(s.requests).toMatchObject({ cpu: 3.5, memory: 15 * GI });
  });
});

describe('requirement resolution (§3.7)', () => {
  const pool = nodePool();
  it.each([
    {
      reason: 'the node label is authoritative',
      key: 'topology.kubernetes.io/zone',
      want: { key: 'topology.kubernetes.io/zone', operator: 'In', values: ['test-zone-a'] },
    },
    {
      reason: 'a key not surfaced as a label comes from the claim requirements',
      key: 'karpenter.sh/capacity-type',
      want: { key: 'karpenter.sh/capacity-type', operator: 'In', values: ['on-demand'] },
    },
    { reason: 'absent from both sources: skipped', key: 'example.com/none', want: null },
  ])('$reason', ({ key, want }) => {
    expect(resolveRequirement(key, node, cand, pool)).toEqual(want);
  });

  it('keeps numeric operators as they are, never weakened', () => {
    const c: NodeClaim = {
      ...cand,
      spec: { ...cand.spec, requirements: [{ key: 'karpenter.kwok.sh/cpu', operator: 'Gte', values: ['4'] }] },
    };
    expect(resolveRequirement('karpenter.kwok.sh/cpu', node, c, pool)).toEqual({
      key: 'karpenter.kwok.sh/cpu',
      operator: 'Gte',
      values: ['4'],
    });
  });

  it('drops a label value the NodePool no longer allows, so the placeholder stays schedulable', () => {
    const moved = {
      ...node!,
      metadata: {
        ...node!.metadata,
        labels: { ...node!.metadata.labels, 'topology.kubernetes.io/zone': 'test-zone-d' },
      },
    };
    expect(resolveRequirement('topology.kubernetes.io/zone', moved, cand, pool)).toBeNull();
  });
});
