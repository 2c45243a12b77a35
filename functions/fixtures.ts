// Shared fixtures for the function's tests and benchmark: NodePools, plan XRs and the §3.2 worked example.
import type { JsonObject } from './json.js';

export const TOKYO_WED_SAT = { timezone: 'Asia/Tokyo', days: ['Wed', 'Sat'], start: '02:00', end: '06:00' };

export function nodePool(
  name: string,
  opts: { expireAfter?: string; tgp?: string | null; labels?: Record<string, string> } = {},
): JsonObject {
  const spec: JsonObject = { expireAfter: opts.expireAfter ?? '336h' };
  if (opts.tgp !== null) spec.terminationGracePeriod = opts.tgp ?? '1h';
  return {
    apiVersion: 'karpenter.sh/v1',
    kind: 'NodePool',
    metadata: { name, labels: opts.labels ?? {} },
    spec: { template: { spec } },
  };
}

/** A MaintenancePlan XR as Crossplane observes it: Crossplane's own fields under spec.crossplane. */
export function planXr(spec: JsonObject, name = 'platform'): JsonObject {
  return {
    apiVersion: 'noderotation.io/v1alpha1',
    kind: 'MaintenancePlan',
    metadata: { name, generation: 1, uid: '6f1c0e9e-0000-4000-8000-000000000001' },
    spec: { ...spec, crossplane: { compositionRef: { name: 'maintenanceplans.noderotation.io' }, resourceRefs: [] } },
  };
}

/**
 * The design's worked example (§3.2) as a plan: one NodePool, {Wed, Sat} 02:00–06:00 Tokyo, E = 336h, tGP = 1h, K = 2.
 */
export const WORKED_EXAMPLE = {
  xr: planXr({ defaults: { maintenanceWindows: [TOKYO_WED_SAT], minRotationChances: 2 } }),
  pools: [nodePool('general')],
  /** P = 4d, t_rot = 1h17m, leadTime = 2P + t_rot, A = 336h − leadTime, G = 2, t_rot_est = 15m, C = 10. */
  annotations: {
    'noderotation.io/window-period': '96h0m0s',
    'noderotation.io/rotation-bound': '1h17m0s',
    'noderotation.io/lead-time': '193h17m0s',
    'noderotation.io/age-threshold': '142h43m0s',
    'noderotation.io/guaranteed-chances': '2',
    'noderotation.io/expected-rotation': '15m0s',
    'noderotation.io/capacity-per-occurrence': '10',
    'noderotation.io/nodepool': 'general',
  },
};

/** A plan over n NodePools sharing one window set, with a rule for a tenth of them (the benchmark's shape). */
export function scaledPlan(n: number): { xr: JsonObject; pools: JsonObject[] } {
  const pools = Array.from({ length: n }, (_, i) =>
    nodePool(`pool-${String(i).padStart(4, '0')}`, {
      labels: { tier: i % 10 === 0 ? 'batch' : 'general', team: `team-${i % 7}` },
      tgp: i % 3 === 0 ? '30m' : '1h',
    }),
  );
  const xr = planXr({
    defaults: {
      maintenanceWindows: [
        { timezone: 'Asia/Tokyo', days: ['Mon', 'Tue', 'Wed', 'Thu', 'Fri'], start: '23:00', end: '03:00' },
      ],
    },
    rules: [
      {
        name: 'batch-weekends',
        nodePoolSelector: { matchLabels: { tier: 'batch' } },
        overrides: {
          maintenanceWindows: [{ timezone: 'Europe/Berlin', days: ['Sat', 'Sun'], start: '00:00', end: '08:00' }],
        },
      },
    ],
  });
  return { xr, pools };
}
