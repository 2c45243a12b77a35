// Our generated CRDs against a real kube-apiserver: they install (structural, CEL compiles), the
// apiserver rejects at admission what `noderotation validate` rejects offline, and a reference-style
// RotationPolicy is accepted with the schema defaults filled in.
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { validateAgainst } from '../../src/api/validate.js';
import type { MaintenancePlan, RotationPolicy } from '../../src/generated/api-types.js';
import { waitFor } from './helpers/k8s.js';
import { kubectlResult as kubectl } from './helpers/kubectl.js';

const ROOT = join(import.meta.dirname, '..', '..');

const WIN = { timezone: 'Asia/Tokyo', days: ['Wed', 'Sat'], start: '02:00', end: '06:00' };
const policy = (name: string, spec: Record<string, unknown>) => ({
  apiVersion: 'noderotation.io/v1alpha1',
  kind: 'RotationPolicy',
  metadata: { name },
  spec,
});

describe('CRDs on a real apiserver', () => {
  beforeAll(async () => {
    const r = kubectl(['apply', '--server-side', '-f', join(ROOT, 'deploy/crds')]);
    expect(r.code, r.err).toBe(0);
    for (const crd of ['rotationpolicies.noderotation.io', 'maintenanceplans.noderotation.io']) {
      await waitFor(
        `${crd} Established`,
        () =>
          kubectl(['get', 'crd', crd, '-o', 'jsonpath={.status.conditions[?(@.type=="Established")].status}']).out ===
          'True',
        { timeoutMs: 60_000 },
      );
    }
  });

  afterAll(() => {
    // Only this file's objects: other files of the phase (placeholder-identity) have policies of their own.
    kubectl(['delete', 'rotationpolicy', 'e2e-reference', '--ignore-not-found', '--wait=true']);
    kubectl(['delete', 'maintenanceplan', 'e2e-plan', '--ignore-not-found', '--wait=true']);
    kubectl(['delete', 'priorityclass', 'noderotation-placeholder', '--ignore-not-found']);
  });

  it('accepts a reference-style RotationPolicy and fills in the schema defaults', () => {
    const doc = policy('e2e-reference', {
      nodePoolSelector: { matchLabels: { workload: 'api' } },
      maintenanceWindows: [WIN],
    });
    expect(validateAgainst('rotationPolicy', doc)).toEqual([]);
    const r = kubectl(['apply', '-f', '-', '-o', 'json'], stringify(doc));
    expect(r.code, r.err).toBe(0);
    const { spec } = JSON.parse(r.out) as RotationPolicy;
    expect(spec).toMatchObject({
      ageThreshold: 'auto',
      minRotationChances: 2,
      surge: {
        maxUnavailable: 1,
        readyTimeout: '15m',
        cooldownAfter: '10m',
        retryBackoff: '30m',
        forcefulFallback: { enabled: false },
      },
    });
  });

  it.each([
    {
      reason: 'both targets (CEL exactly-one-of)',
      spec: { nodePools: ['a'], nodePoolSelector: {}, maintenanceWindows: [WIN] },
      message: 'set exactly one of nodePoolSelector or nodePools',
    },
    {
      reason: 'no target (CEL exactly-one-of)',
      spec: { maintenanceWindows: [WIN] },
      message: 'set exactly one of nodePoolSelector or nodePools',
    },
    {
      reason: 'a time that is not HH:MM (pattern)',
      spec: { nodePools: ['a'], maintenanceWindows: [{ ...WIN, start: '25:00' }] },
      message: 'spec.maintenanceWindows[0].start',
    },
    {
      reason: 'an unknown day (enum)',
      spec: { nodePools: ['a'], maintenanceWindows: [{ ...WIN, days: ['Funday'] }] },
      message: 'spec.maintenanceWindows[0].days[0]',
    },
    {
      reason: 'K below 1 (minimum)',
      spec: { nodePools: ['a'], maintenanceWindows: [WIN], minRotationChances: 0 },
      message: 'spec.minRotationChances',
    },
    {
      reason: 'a zero readyTimeout (not pattern)',
      spec: { nodePools: ['a'], maintenanceWindows: [WIN], surge: { readyTimeout: '0s' } },
      message: 'spec.surge.readyTimeout',
    },
    {
      reason: 'In without values (CEL)',
      spec: { nodePoolSelector: { matchExpressions: [{ key: 'a', operator: 'In' }] }, maintenanceWindows: [WIN] },
      message: 'In and NotIn need at least one value',
    },
    {
      reason: 'a freeze ending before it starts (CEL)',
      spec: {
        nodePools: ['a'],
        maintenanceWindows: [WIN],
        freezes: [{ start: '2027-01-02T00:00:00Z', end: '2027-01-01T00:00:00Z' }],
      },
      message: 'end must be after start',
    },
    {
      reason: 'prePull enabled (CEL)',
      spec: { nodePools: ['a'], maintenanceWindows: [WIN], prePull: { enabled: true } },
      message: 'prePull is reserved',
    },
    {
      reason: 'duplicate days (list-type set)',
      spec: { nodePools: ['a'], maintenanceWindows: [{ ...WIN, days: ['Wed', 'Wed'] }] },
      message: 'Duplicate value',
    },
  ])('rejects at admission, as validate does offline: $reason', ({ spec, message }) => {
    const doc = policy('e2e-invalid', spec);
    expect(validateAgainst('rotationPolicy', doc).length).toBeGreaterThan(0);
    const r = kubectl(['create', '-f', '-'], stringify(doc));
    expect(r.code).not.toBe(0);
    expect(r.err).toContain(message);
  });

  it('keeps a MaintenancePlan override unset (no defaults under spec)', () => {
    const plan = {
      apiVersion: 'noderotation.io/v1alpha1',
      kind: 'MaintenancePlan',
      metadata: { name: 'e2e-plan' },
      spec: {
        defaults: { maintenanceWindows: [WIN], surge: { readyTimeout: '20m' } },
        rules: [{ name: 'r', nodePools: ['x'], overrides: { surge: { cooldownAfter: '5m' } } }],
      },
    };
    expect(validateAgainst('maintenancePlan', plan)).toEqual([]);
    const r = kubectl(['apply', '-f', '-', '-o', 'json'], stringify(plan));
    expect(r.code, r.err).toBe(0);
    expect((JSON.parse(r.out) as MaintenancePlan).spec.rules?.[0]?.overrides).toEqual({
      surge: { cooldownAfter: '5m' },
    });
  });

  it('installs the placeholder PriorityClass', () => {
    const r = kubectl(['apply', '-f', join(ROOT, 'deploy/placeholder-priorityclass.yaml'), '-o', 'json']);
    expect(r.code, r.err).toBe(0);
    expect(JSON.parse(r.out)).toMatchObject({ value: -10, preemptionPolicy: 'Never' });
  });

  it('prints the printer columns', () => {
    const r = kubectl(['get', 'rotationpolicies']);
    expect(r.code, r.err).toBe(0);
    expect(r.out.split('\n')[0]).toMatch(/^NAME\s+AGE-THRESHOLD\s+MATCHED\s+ROTATING\s+READY\s+AGE/);
  });
});
