import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { A } from '../src/engine/annotations.js';
import { poolReport as report } from '../test/support/fixtures.js';
import { annotationPatch } from './execute/executor.js';
import { actionKey, matchesFailpoint, pausepoint } from './execute/failpoint.js';
import { parseBindAddress } from './http.js';
import { toRecord } from '../runtime/leader/lease-store.js';
import { microTime } from '../runtime/kube/micro-time.js';
import { jsonLogger } from './log.js';
import { ControllerUsageError, parseControllerFlags } from './flags.js';
import { loadKubeConfig, resourceOf } from './main.js';
import { ControllerMetrics } from './metrics.js';
import { eventObject } from './rotation/events.js';
import { NODE, pick, POD, ROTATIONPOLICY } from '../runtime/kube/shape.js';
import { anchoredNodes } from './state/snapshot.js';
import { policyStatus, statusChanged } from './status/policy-status.js';

describe('shapes keep exactly what the engine reads', () => {
  it('a Node loses managedFields, images, heartbeats, nodeInfo; keeps labels, taints, Ready, allocatable', () => {
    const node = {
      apiVersion: 'v1',
      kind: 'Node',
      metadata: {
        name: 'n1',
        uid: 'u',
        resourceVersion: '7',
        labels: { a: 'b' },
        annotations: { x: 'y' },
        managedFields: [{ manager: 'kubelet' }],
      },
      spec: {
        providerID: 'kwok://n1',
        unschedulable: true,
        taints: [{ key: 'k', effect: 'NoSchedule' }],
        podCIDR: 'x',
      },
      status: {
        conditions: [{ type: 'Ready', status: 'True', lastHeartbeatTime: '2026-01-01T00:00:00Z', message: 'ok' }],
        allocatable: { cpu: '4' },
        images: [{ names: ['a'], sizeBytes: 1 }],
        nodeInfo: { kubeletVersion: 'v1' },
      },
    };
    expect(pick(node, NODE)).toEqual({
      apiVersion: 'v1',
      kind: 'Node',
      metadata: { name: 'n1', uid: 'u', resourceVersion: '7', labels: { a: 'b' }, annotations: { x: 'y' } },
      spec: { providerID: 'kwok://n1', unschedulable: true, taints: [{ key: 'k', effect: 'NoSchedule' }] },
      status: { conditions: [{ type: 'Ready', status: 'True' }], allocatable: { cpu: '4' } },
    });
  });

  it('a Pod keeps requests, placement and phase; loses env, volumes, command and container statuses', () => {
    const pod = {
      metadata: {
        name: 'p',
        namespace: 'ns',
        ownerReferences: [{ kind: 'DaemonSet', name: 'd', apiVersion: 'apps/v1' }],
      },
      spec: {
        nodeName: 'n1',
        containers: [
          { name: 'c', image: 'i', env: [{ name: 'SECRET', value: 's' }], resources: { requests: { cpu: '1' } } },
        ],
        volumes: [{ name: 'v' }],
      },
      status: { phase: 'Running', containerStatuses: [{ name: 'c' }] },
    };
    expect(pick(pod, POD)).toEqual({
      metadata: {
        name: 'p',
        namespace: 'ns',
        ownerReferences: [{ kind: 'DaemonSet', name: 'd', apiVersion: 'apps/v1' }],
      },
      spec: { nodeName: 'n1', containers: [{ name: 'c', image: 'i', resources: { requests: { cpu: '1' } } }] },
      status: { phase: 'Running' },
    });
  });
});

describe('anchoredNodes: the nodes whose Pods a pass lists before deciding', () => {
  const claim = (name: string, node: string, ann: Record<string, string> = {}) => ({
    apiVersion: 'karpenter.sh/v1' as const,
    kind: 'NodeClaim' as const,
    metadata: { name, annotations: ann },
    spec: {},
    status: { nodeName: node },
  });
  const snapshot = (poolAnn: Record<string, string>) => ({
    nodePools: [
      {
        apiVersion: 'karpenter.sh/v1' as const,
        kind: 'NodePool' as const,
        metadata: { name: 'p', annotations: poolAnn },
        spec: { template: { spec: {} } },
      },
    ],
    nodeClaims: [claim('c1', 'n1', { [A.surgeClaim]: 'c9' }), claim('c2', 'n2'), claim('c9', 'n9')],
  });
  it('an idle pool: none (no Pod list at all)', () => {
    expect(anchoredNodes(snapshot({}))).toEqual([]);
  });
  it('a rotation in flight: the anchored claim’s node and its surge claim’s node', () => {
    expect(anchoredNodes(snapshot({ [A.activeRotation]: 'c1' }))).toEqual(['n1', 'n9']);
  });
  it('an anchor naming a claim that is gone: nothing to list', () => {
    expect(anchoredNodes(snapshot({ [A.activeRotation]: 'zz' }))).toEqual([]);
  });
});

describe('RotationPolicy status', () => {
  const base = { name: 'p', generation: 3, invalid: [], previous: [], now: '2026-12-01T00:00:00Z' };
  const cond = (s: ReturnType<typeof policyStatus>, type: string) => s.conditions.find((c) => c.type === type);

  it('governing two pools, one rotating: Ready/Accepted, Reconciling, not Stalled; counts', () => {
    const s = policyStatus({
      ...base,
      reports: [report({}), report({ nodePool: 'b', inProgress: true, activeRotation: 'c1' })],
    });
    expect(s).toMatchObject({ observedGeneration: 3, matchedNodePools: 2, rotatingNodePools: 1 });
    expect(cond(s, 'Ready')).toMatchObject({ status: 'True', reason: 'Accepted' });
    expect(cond(s, 'Reconciling')).toMatchObject({ status: 'True', message: 'Rotating c1 in NodePool b.' });
    expect(cond(s, 'Stalled')).toMatchObject({ status: 'False' });
  });

  it('an invalid spec: Ready False/Invalid and Stalled True, the message names the field and what is allowed', () => {
    const s = policyStatus({
      ...base,
      invalid: [{ path: 'spec.surge.readyTimeout', found: '"soon"', allowed: 'a Go duration such as 15m' }],
      reports: [],
    });
    expect(cond(s, 'Ready')).toMatchObject({ status: 'False', reason: 'Invalid' });
    expect(cond(s, 'Stalled')?.message).toContain('spec.surge.readyTimeout: found "soon"; allowed: a Go duration');
  });

  it('a fatal finding about the NodePool itself names its field once: "NodePool field …", not the pool again', () => {
    const f = {
      severity: 'fatal' as const,
      reason: 'NonPositiveAgeThreshold' as const,
      field: 'NodePool a spec.template.spec.expireAfter',
      message: 'expireAfter 15m is not longer than the lead time …',
    };
    const s = policyStatus({ ...base, reports: [report({ findings: [f] })] });
    expect(cond(s, 'Stalled')?.message).toContain(
      'NodePool a: NodePool field spec.template.spec.expireAfter: expireAfter 15m is not longer than the lead time ' +
        '… (NonPositiveAgeThreshold)',
    );
  });

  it('an equal-specificity tie: Conflict naming both policies and the pool; no pool counted as matched', () => {
    const s = policyStatus({
      ...base,
      reports: [report({ policy: null, governance: 'conflict', conflictingPolicies: ['p', 'q'] })],
    });
    expect(s.matchedNodePools).toBe(0);
    expect(cond(s, 'Ready')).toMatchObject({ status: 'False', reason: 'Conflict' });
    expect(cond(s, 'Ready')?.message).toContain('RotationPolicies p, q match NodePool a equally specifically');
  });

  it('per-pool summaries: governed pools only, times as RFC 3339, absent values left out, figures as text', () => {
    const figures = {
      windowPeriodSeconds: 96 * 3600,
      rotationBoundSeconds: 4620,
      leadTimeSeconds: null,
      ageThresholdSeconds: 142 * 3600 + 43 * 60,
      guaranteedChances: 2,
      expectedRotationSeconds: 900,
      capacityPerOccurrence: 10,
    };
    const s = policyStatus({
      ...base,
      reports: [
        report({ windowOpensAt: Date.UTC(2026, 11, 5, 2), lastFailureAt: Date.UTC(2026, 10, 30), figures }),
        report({
          nodePool: 'b',
          windowOpen: true,
          windowClosesAt: Date.UTC(2026, 11, 1, 4),
          inProgress: true,
          activeRotation: 'c1',
          mode: 'surge',
          phase: 'pending',
          idle: 'waiting for the surge node',
        }),
        report({ nodePool: 'c', policy: 'other' }),
      ],
    });
    expect(s.nodePools).toEqual([
      {
        name: 'a',
        windowOpen: false,
        windowOpensAt: '2026-12-05T02:00:00Z',
        candidates: 0,
        lastFailureAt: '2026-11-30T00:00:00Z',
        figures: {
          windowPeriod: '96h0m0s',
          rotationBound: '1h17m0s',
          ageThreshold: '142h43m0s',
          guaranteedChances: 2,
          expectedRotation: '15m0s',
          capacityPerOccurrence: 10,
        },
      },
      {
        name: 'b',
        windowOpen: true,
        windowClosesAt: '2026-12-01T04:00:00Z',
        candidates: 0,
        activeRotation: { nodeClaim: 'c1', mode: 'surge', phase: 'pending', drainStuck: false },
        waiting: 'waiting for the surge node',
      },
    ]);
  });

  it('lastTransitionTime moves only when the status does', () => {
    const first = policyStatus({ ...base, reports: [report({})] });
    const later = policyStatus({
      ...base,
      now: '2026-12-02T00:00:00Z',
      previous: first.conditions,
      reports: [report({})],
    });
    expect(cond(later, 'Ready')?.lastTransitionTime).toBe('2026-12-01T00:00:00Z');
    const flipped = policyStatus({
      ...base,
      now: '2026-12-02T00:00:00Z',
      previous: first.conditions,
      reports: [report({ inProgress: true })],
    });
    expect(cond(flipped, 'Reconciling')?.lastTransitionTime).toBe('2026-12-02T00:00:00Z');
    expect(cond(flipped, 'Ready')?.lastTransitionTime).toBe('2026-12-01T00:00:00Z');
  });

  it('a written status read back through the watch shape is unchanged, so an idle pass writes nothing', () => {
    const written = policyStatus({ ...base, reports: [report({})] });
    const cached = pick({ metadata: { name: 'p' }, spec: {}, status: written }, ROTATIONPOLICY) as {
      status: typeof written;
    };
    const again = policyStatus({ ...base, previous: cached.status.conditions, reports: [report({})] });
    expect(statusChanged(cached.status, again)).toBe(false);
  });
});

describe('wire formats', () => {
  it('annotation patches set our keys and null the removed ones, nothing else', () => {
    expect(annotationPatch({ [A.state]: 'pending' }, [A.failedAt])).toEqual({
      [A.state]: 'pending',
      [A.failedAt]: null,
    });
  });

  it('Lease times are MicroTime (six fractional digits) and read back', () => {
    expect(microTime(Date.UTC(2026, 11, 1, 2, 3, 4, 567))).toBe('2026-12-01T02:03:04.567000Z');
    expect(
      toRecord({
        metadata: { name: 'l', namespace: 'n' },
        spec: {
          holderIdentity: 'h',
          leaseDurationSeconds: 15,
          renewTime: '2026-12-01T02:03:04.567000Z',
          leaseTransitions: 2,
        },
      }),
    ).toEqual({
      holder: 'h',
      durationSeconds: 15,
      acquireTime: null,
      renewTime: Date.UTC(2026, 11, 1, 2, 3, 4, 567),
      transitions: 2,
    });
  });

  it('an Event about a NodePool lives in default, names the object and a MicroTime; notes are cut at 1 KiB', () => {
    const e = eventObject(
      {
        target: { kind: 'NodePool', name: 'general' },
        type: 'Normal',
        reason: 'RotationStarted',
        note: 'x'.repeat(2000),
      },
      'me',
      Date.UTC(2026, 11, 1),
    );
    expect(e).toMatchObject({
      apiVersion: 'events.k8s.io/v1',
      metadata: { namespace: 'default' },
      eventTime: '2026-12-01T00:00:00.000000Z',
      reportingController: 'noderotation.io/controller',
      reportingInstance: 'me',
      regarding: { apiVersion: 'karpenter.sh/v1', kind: 'NodePool', name: 'general' },
    });
    expect((e.note as string).length).toBe(1024);
  });

  it('metrics: label pairs in name order, as the Go client writes them', async () => {
    const m = new ControllerMetrics();
    m.rotation.observe('completed', 'a', 1, { outcome: 'success' });
    m.rotation.observe('drainSeconds', 'a', 42);
    const text = await m.text();
    expect(text).toContain('noderotation_completed_total{nodepool="a",outcome="success"} 1');
    expect(text).toContain('noderotation_duration_seconds_bucket{nodepool="a",phase="drain",le="60"} 1');
  });

  it('a NodePool that is gone leaves no gauge series behind', async () => {
    const m = new ControllerMetrics();
    m.rotation.report(report({ nodePool: 'gone', candidates: 3, windowOpen: true }));
    expect(await m.text()).toContain('noderotation_candidates{nodepool="gone"} 3');
    m.rotation.forgetPool('gone');
    expect(await m.text()).not.toContain('nodepool="gone"');
  });

  it('forecast metrics per NodePool: least margin, claims at risk, time to expiry, no claim labels', async () => {
    const m = new ControllerMetrics();
    const now = Date.parse('2027-01-04T00:00:00Z');
    const f = (name: string, hoursLeft: number | null, margin: number | null, atRisk: boolean) => ({
      nodeClaim: name,
      deadline: hoursLeft === null ? null : now + hoursLeft * 3_600_000,
      dueBy: hoursLeft === null ? null : now + hoursLeft * 3_600_000,
      eligibleAt: null,
      plannedWindow: null,
      plannedStart: margin === null ? null : now,
      rotationBoundSeconds: 4620,
      marginSeconds: margin,
      atRisk,
      deadlineInFreeze: null,
    });
    m.rotation.forecast('p', [f('a', 30, 7200.5, false), f('b', 5, -60, true), f('c', null, null, false)], now);
    let text = await m.text();
    expect(text).toContain('noderotation_nodepool_min_forecast_margin_seconds{nodepool="p"} -60');
    expect(text).toContain('noderotation_nodepool_claims_at_risk{nodepool="p"} 1');
    expect(text).toContain('noderotation_nodeclaim_time_until_forced_expiry_seconds_bucket{nodepool="p",le="21600"} 1');
    expect(text).toContain(
      'noderotation_nodeclaim_time_until_forced_expiry_seconds_bucket{nodepool="p",le="172800"} 2',
    );
    expect(text).toContain('noderotation_nodeclaim_time_until_forced_expiry_seconds_count{nodepool="p"} 2');
    expect(text).not.toContain('nodeclaim="');
    // Level-triggered: the next pass replaces the distribution; a pool without a forecast reads 0.
    m.rotation.forecast('p', [f('a', 29, 3600, false)], now);
    text = await m.text();
    expect(text).toContain('noderotation_nodeclaim_time_until_forced_expiry_seconds_count{nodepool="p"} 1');
    expect(text).toContain('noderotation_nodepool_claims_at_risk{nodepool="p"} 0');
    m.rotation.forecast('q', null, now);
    expect(await m.text()).toContain('noderotation_nodepool_min_forecast_margin_seconds{nodepool="q"} 0');
    m.rotation.forgetPool('p');
    expect(await m.text()).not.toContain('nodepool="p"');
  });

  it('API paths map to their resource for the request counter', () => {
    expect(resourceOf('/apis/karpenter.sh/v1/nodeclaims/x')).toBe('nodeclaims');
    expect(resourceOf('/api/v1/namespaces/ns/pods/p')).toBe('pods');
    expect(resourceOf('/api/v1/pods?fieldSelector=spec.nodeName=n')).toBe('pods');
    expect(resourceOf('/apis/coordination.k8s.io/v1/namespaces/ns/leases/l')).toBe('leases');
  });

  it('logs are one JSON object a line with the fields given', () => {
    const lines: string[] = [];
    const log = jsonLogger(
      'info',
      (l) => lines.push(l),
      () => 0,
    ).with({ nodepool: 'a' });
    log.debug('hidden');
    log.info('anchored', { nodeclaim: 'c1' });
    expect(lines.map((l) => JSON.parse(l) as unknown)).toEqual([
      { ts: '1970-01-01T00:00:00.000Z', level: 'info', msg: 'anchored', nodepool: 'a', nodeclaim: 'c1' },
    ]);
  });
});

describe('controller flags', () => {
  const cases: { reason: string; args: string[]; error?: RegExp }[] = [
    { reason: 'defaults are the reference controller’s', args: [] },
    {
      reason: 'a metrics address that is no HOST:PORT',
      args: ['--metrics-bind-address', 'nope'],
      error: /--metrics-bind-address: found "nope"/,
    },
    {
      reason: 'a port out of range',
      args: ['--health-probe-bind-address', ':70000'],
      error: /--health-probe-bind-address/,
    },
    {
      reason: 'a namespace that is no DNS label',
      args: ['--namespace', 'Bad_NS'],
      error: /--namespace: found "Bad_NS"/,
    },
    {
      reason: 'concurrency zero',
      args: ['--concurrency', '0'],
      error: /--concurrency: found "0"; allowed: an integer from 1 to 64/,
    },
    { reason: 'an unknown log level', args: ['--log-level', 'loud'], error: /--log-level/ },
  ];
  for (const c of cases) {
    it(c.reason, () => {
      if (c.error) {
        expect(() => parseControllerFlags(c.args)).toThrow(ControllerUsageError);
        expect(() => parseControllerFlags(c.args)).toThrow(c.error);
      } else {
        expect(parseControllerFlags(c.args)).toMatchObject({
          namespace: 'node-rotation-system',
          metrics: { host: '0.0.0.0', port: 8080 },
          health: { host: '0.0.0.0', port: 8081 },
          leaderElect: false,
          placeholderImage: 'registry.k8s.io/pause:3.10',
          priorityClass: 'noderotation-placeholder',
        });
      }
    });
  }

  it('no kubeconfig and not in a cluster: a usage error saying what to pass, not a crash', () => {
    expect(() => loadKubeConfig(undefined, {})).toThrow(/no kubeconfig: pass --kubeconfig FILE, set KUBECONFIG/);
    expect(() => loadKubeConfig('/nonexistent/kubeconfig', {})).toThrow(ControllerUsageError);
  });

  it('bind address 0 disables an endpoint; --kubeconfig is the flag alone (KUBECONFIG is read when resolving)', () => {
    expect(parseBindAddress('metrics-bind-address', '0')).toBeNull();
    expect(parseControllerFlags([]).kubeconfig).toBeUndefined();
    expect(parseControllerFlags(['--kubeconfig', '/x']).kubeconfig).toBe('/x');
  });
});

describe('failpoint keys (crash tests)', () => {
  const anchor = { type: 'annotate' as const, target: { kind: 'NodePool' as const, name: 'p' }, reason: 'r' };
  it('the anchor and the draining write are told apart', () => {
    const k1 = actionKey({ ...anchor, set: { [A.activeRotation]: 'c' }, remove: [] });
    const k2 = actionKey({ ...anchor, set: { [A.activeRotationState]: 'draining', [A.drainingAt]: 't' }, remove: [] });
    const fp = `annotate:NodePool:${A.activeRotation}`;
    expect(matchesFailpoint(fp, k1)).toBe(true);
    expect(matchesFailpoint(fp, k2)).toBe(false);
    expect(matchesFailpoint(`annotate:NodePool:${A.activeRotationState}`, k2)).toBe(true);
    expect(actionKey({ type: 'cordon', node: 'n', reason: 'r' })).toBe('cordon');
  });

  it('the pausepoint holds the first matching write until its file exists, and only that one', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'pausepoint-'));
    try {
      const file = join(dir, 'release');
      const hold = pausepoint(
        { NODEROTATION_PAUSEPOINT: `annotate:NodePool:${A.activeRotation}`, NODEROTATION_PAUSEPOINT_FILE: file },
        5,
      );
      const start = { ...anchor, set: { [A.activeRotation]: 'c' }, remove: [] };
      await hold({ type: 'cordon', node: 'n', reason: 'r' }); // not the one: returns at once
      expect(existsSync(`${file}.paused`)).toBe(false);
      let released = false;
      const held = hold(start).then(() => (released = true));
      await new Promise((r) => setTimeout(r, 30));
      expect(existsSync(`${file}.paused`)).toBe(true);
      expect(released).toBe(false);
      writeFileSync(file, '');
      await held;
      expect(released).toBe(true);
      rmSync(file);
      await hold(start); // held once only: a second match goes straight through
      await pausepoint({})(start); // unset: nothing
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
