// The whole GitOps path once, with the real things (issue 11, items 2 and 6): a fleet repository pushed to a
// local Git server, Flux (source-controller and kustomize-controller v1.7.3, `cluster.sh flux up`) syncing it
// with examples/flux/, Crossplane core (`cluster.sh crossplane up`) composing the plan's RotationPolicies
// through our function, and the controller rotating a node of a KWOK pool inside the plan's (always open)
// window. Along the way: the plans' Kustomization is Ready only once the plan is; a push that changes the
// plan reaches the policies; a plan Crossplane cannot compose fails the health check at once (an event; the
// field on the plan's Synced condition); a plan the apiserver rejects fails the sync with the field named (an
// event); a plan deleted from Git is pruned, with its policies. Syncs are requested with the
// reconcile.fluxcd.io/requestedAt annotation, never waited for on an interval.
import { readFileSync } from 'node:fs';
import type { CoreV1Event } from '@kubernetes/client-node';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse, stringify } from 'yaml';
import { ON_DEMAND_AMD64, poolWithApp } from './helpers/context.js';
import { repoRoot } from './helpers/cluster.js';
import { ControllerProcess } from './helpers/controller-process.js';
import { crossplaneDown } from './helpers/crossplane.js';
import { kubectl } from './helpers/kubectl.js';
import { clusterAsync, FleetRepo, fluxDown, fluxUp, type FluxEnv } from './helpers/flux.js';
import { conditionTrue, Kube, TestResources, waitFor } from './helpers/k8s.js';
import { eventsV1, installNoderotation, serviceAccountKubeconfig } from './helpers/noderotation-api.js';

const EXAMPLES = join(repoRoot, 'examples');
const PLAN_CRD = 'maintenanceplans.noderotation.io';
const PLAN = 'e2e-flux';
const PLAN_FILE = `plans/${PLAN}.yaml`;
/** The label that puts the test's NodePool, and no other, under the plan. */
const FLEET_LABEL = 'noderotation.test/fleet';
const PLATFORM = 'noderotation-platform';
const PLANS = 'noderotation-plans';

interface Condition {
  type: string;
  status: string;
  reason?: string;
  message?: string;
  lastTransitionTime?: string;
}
interface Obj {
  metadata: { name: string; namespace?: string; labels?: Record<string, string> };
  spec?: Record<string, unknown>;
  status?: { conditions?: Condition[]; lastAppliedRevision?: string };
}

const getJson = <T>(args: string[]): T => JSON.parse(kubectl([...args, '-o', 'json'])) as T;
const condition = (o: Obj | undefined, type: string): Condition | undefined =>
  o?.status?.conditions?.find((c) => c.type === type);
const exampleDoc = (file: string): Obj => parse(readFileSync(join(EXAMPLES, 'flux', file), 'utf8')) as Obj;

/** The fleet's plan: only the test's NodePool, an always-open window, every node past its threshold at once. */
function planYaml({ surge = {}, start = '00:00', ageThreshold = '1s' } = {}): string {
  return stringify({
    apiVersion: 'noderotation.io/v1alpha1',
    kind: 'MaintenancePlan',
    metadata: { name: PLAN },
    spec: {
      nodePoolSelector: { matchLabels: { [FLEET_LABEL]: 'flux' } },
      defaults: {
        maintenanceWindows: [
          { timezone: 'UTC', days: ['Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat', 'Sun'], start, end: '00:00' },
        ],
        ageThreshold,
        // cooldownAfter keeps it to one rotation.
        surge: { readyTimeout: '5m', cooldownAfter: '30m', ...surge },
      },
    },
  });
}

const planPolicies = (): Obj[] =>
  getJson<{ items: Obj[] }>(['get', 'rotationpolicies', '-l', `noderotation.io/plan=${PLAN}`]).items;
const kustomization = (name: string): Obj =>
  getJson<Obj>(['get', 'kustomizations.kustomize.toolkit.fluxcd.io', name, '-n', 'flux-system']);

describe('Flux syncs a fleet repository; Crossplane composes its plan; the controller rotates', () => {
  const kube = new Kube();
  // Not useCluster(): the NodePool and the controller live across the file's tests, cleaned up in afterAll.
  const res = new TestResources(kube);
  let flux: FluxEnv;
  let fleet: FleetRepo;
  let ns = '';
  let pool = '';
  let controller: ControllerProcess | undefined;
  let identity: { cleanup: () => void } | undefined;
  let oldClaim = '';
  /** The commit the plans' Kustomization should have applied last. */
  let revision = '';

  const describeState = (): string =>
    [PLATFORM, PLANS]
      .map((k) => `${k}: ${JSON.stringify(kustomization(k).status?.conditions)}`)
      .concat(
        `policies: ${planPolicies()
          .map((p) => p.metadata.name)
          .join(', ')}`,
      )
      .join('\n');

  /** What a user's `flux reconcile source git fleet` does: ask for a fetch now. */
  function requestSync(): void {
    kubectl([
      'annotate',
      '--overwrite',
      '-n',
      flux.namespace,
      'gitrepositories.source.toolkit.fluxcd.io/fleet',
      `reconcile.fluxcd.io/requestedAt=${new Date().toISOString()}`,
    ]);
  }

  /**
   * Pushes `plan` as the commit `message`, asks for a sync, and returns the first event on the plans'
   * Kustomization about that commit (Flux annotates each with its revision) that `match`es. An event, not a
   * polled Ready: the condition is rewritten by every retry.
   */
  async function pushForEvent(message: string, plan: string, match: (e: CoreV1Event) => boolean) {
    fleet.write(PLAN_FILE, plan);
    const sha = fleet.push(message);
    requestSync();
    return waitFor(
      `an event on Kustomization ${PLANS} about “${message}”`,
      async () =>
        (await kube.events({ kind: 'Kustomization', name: PLANS, namespace: flux.namespace })).find(
          (e) => e.metadata.annotations?.['kustomize.toolkit.fluxcd.io/revision'] === `main@sha1:${sha}` && match(e),
        ),
      { timeoutMs: 60_000, describe: describeState },
    );
  }

  beforeAll(async () => {
    // Crossplane and Flux start side by side (separate processes) while the NodePool gets its node, before the
    // plan that governs it exists.
    const crossplane = clusterAsync('crossplane', 'up');
    const fluxStarted = fluxUp();
    await installNoderotation();
    const withApp = await poolWithApp(kube, res, 'e2e-flux', ON_DEMAND_AMD64);
    ({ ns, pool } = withApp);
    oldClaim = withApp.claim.metadata.name;
    kubectl(['label', 'nodepool', pool, `${FLEET_LABEL}=flux`]);
    const [, fluxEnv] = await Promise.all([crossplane, fluxStarted]);
    flux = fluxEnv;
    // The plain maintenanceplans CRD (deploy/crds) stays: the XRD takes it over (Crossplane adopts a CRD no one
    // controls), as when a cluster moves from the plain CRD to Crossplane. Deleting it first would leave the
    // kind unserved for a moment, and Kubernetes' garbage collector, should its 30 s discovery resync fall in
    // that moment, would then delete the plan's policies only after a backoff of up to a minute.
    fleet = new FleetRepo(flux, 'fleet');
    fleet.write(
      'platform/noderotation.io_rotationpolicies.yaml',
      readFileSync(join(repoRoot, 'deploy/crds/noderotation.io_rotationpolicies.yaml'), 'utf8'),
    );
    for (const f of ['xrd.yaml', 'composition.yaml', 'clusterrole.yaml']) {
      fleet.write(`platform/${f}`, readFileSync(join(EXAMPLES, 'crossplane', f), 'utf8'));
    }
    // Git keeps no empty directory: the note keeps plans/ in the tree when the last plan is removed.
    fleet.write('plans/README.md', 'One MaintenancePlan per file.\n');
    fleet.write(PLAN_FILE, planYaml());
    const first = fleet.push('node rotation: platform and the e2e plan');

    const source = exampleDoc('gitrepository.yaml');
    (source.spec as { url: string }).url = fleet.url;
    kubectl(['apply', '-f', '-'], stringify(source));
    kubectl(['apply', '-f', join(EXAMPLES, 'flux/kustomization-platform.yaml')]);
    kubectl(['apply', '-f', join(EXAMPLES, 'flux/kustomization-plans.yaml')]);

    // The controller, as its ServiceAccount, while Flux and Crossplane work.
    const sa = await serviceAccountKubeconfig(ns);
    identity = sa;
    controller = new ControllerProcess(ns, [], sa.kubeconfig);
    await controller.start();
    revision = first;
  });

  afterAll(async () => {
    await controller?.kill();
    identity?.cleanup();
    // The NodePool and its namespace go while Flux prunes (Karpenter drains in the background).
    if (pool) await kube.deleteNodePool(pool);
    // Deleting the Kustomizations prunes what they applied (prune: true): the plans first (if one is left, the
    // garbage collector deletes its policies), then the platform (the XRD, while Crossplane still runs to remove
    // its finalizers).
    if (flux) {
      for (const k of [PLANS, PLATFORM]) {
        kubectl([
          'delete',
          'kustomizations.kustomize.toolkit.fluxcd.io',
          k,
          '-n',
          flux.namespace,
          '--ignore-not-found',
        ]);
      }
      kubectl([
        'delete',
        'gitrepositories.source.toolkit.fluxcd.io',
        'fleet',
        '-n',
        flux.namespace,
        '--ignore-not-found',
      ]);
      fleet?.cleanup();
    }
    fluxDown();
    // Pruning the XRD made Crossplane delete the CRD it had taken over.
    await waitFor(`CRD ${PLAN_CRD} deleted`, () => kubectl(['get', 'crd', PLAN_CRD, '--ignore-not-found']) === '', {
      timeoutMs: 60_000,
    });
    crossplaneDown();
    // Leave the cluster as the other tests expect it: our own CRDs installed.
    kubectl(['apply', '--server-side', '--force-conflicts', '-f', join(repoRoot, 'deploy/crds')]);
    await res.cleanup();
  });

  it('the plans’ Kustomization is Ready only once the plan’s XR is, its RotationPolicy composed', async () => {
    const k = await waitFor(
      `Kustomization ${PLANS} Ready at ${revision}`,
      () => {
        const o = kustomization(PLANS);
        return condition(o, 'Ready')?.status === 'True' && o.status?.lastAppliedRevision === `main@sha1:${revision}`
          ? o
          : undefined;
      },
      { timeoutMs: 90_000, describe: describeState },
    );
    const xr = getJson<Obj>(['get', 'maintenanceplan', PLAN]);
    const xrReady = condition(xr, 'Ready');
    expect(xrReady?.status).toBe('True');
    // Times have second precision: the XR was Ready no later than the Kustomization.
    expect(Date.parse(xrReady?.lastTransitionTime ?? '')).toBeLessThanOrEqual(
      Date.parse(condition(k, 'Ready')?.lastTransitionTime ?? ''),
    );
    expect(planPolicies().map((p) => p.metadata.name)).toEqual([`${PLAN}-${pool}`]);
  });

  it('the controller rotates the pool’s node inside the plan’s window', async () => {
    await waitFor(
      'the old NodeClaim gone, a Ready replacement and RotationCompleted',
      async () => {
        const claims = await kube.nodeClaims(pool);
        if (claims.some((c) => c.metadata.name === oldClaim)) return false;
        if (claims.filter((c) => conditionTrue(c, 'Ready')).length !== 1) return false;
        const reasons = (await eventsV1(kube, 'default'))
          .filter((e) => e.regarding?.name === pool)
          .map((e) => e.reason);
        return reasons.includes('RotationCompleted');
      },
      { timeoutMs: 180_000, intervalMs: 1000, describe: () => controller?.tail(30) ?? '' },
    );
    expect(controller?.errors()).toEqual([]);
  });

  it('a push that changes the plan reaches the RotationPolicies', async () => {
    fleet.write(PLAN_FILE, planYaml({ surge: { readyTimeout: '7m' } }));
    revision = fleet.push('e2e plan: readyTimeout 7m');
    requestSync();
    await waitFor(
      'the policy with readyTimeout 7m',
      () => planPolicies().some((p) => (p.spec?.surge as { readyTimeout?: string }).readyTimeout === '7m'),
      { timeoutMs: 60_000, describe: describeState },
    );
  });

  // The plans' `failed` expression (Synced=False) ends the health check at once rather than after `timeout`.
  // Flux's message names only the object; the field is in the plan's own condition, where the user looks next.
  it('a plan Crossplane cannot compose fails the health check at once, the field named on the plan', async () => {
    const before = planPolicies().map((p) => JSON.stringify(p.spec));
    const event = await pushForEvent(
      'e2e plan: ageThreshold 720h, as long as expireAfter',
      planYaml({ surge: { readyTimeout: '7m' }, ageThreshold: '720h' }),
      (e) => e.reason === 'HealthCheckFailed',
    );
    expect(event.message).toContain(`MaintenancePlan/${PLAN} status: 'Failed'`);
    const synced = condition(getJson<Obj>(['get', 'maintenanceplan', PLAN]), 'Synced');
    expect(synced?.status).toBe('False');
    expect(synced?.message).toContain('spec.defaults.ageThreshold: ageThreshold 720h leaves 0 guaranteed windows');
    // Crossplane applies nothing from a FATAL answer.
    expect(planPolicies().map((p) => JSON.stringify(p.spec))).toEqual(before);
  });

  it('a plan the apiserver rejects fails the sync with an event naming the field, and changes nothing', async () => {
    const before = planPolicies().map((p) => JSON.stringify(p.spec));
    const event = await pushForEvent(
      'e2e plan: a window starting at 24:30',
      planYaml({ surge: { readyTimeout: '9m' }, start: '24:30' }),
      (e) => e.type === 'Warning',
    );
    expect(event.reason).toBe('ReconciliationFailed');
    expect(event.message).toContain('spec.defaults.maintenanceWindows[0].start: Invalid value: "24:30"');
    expect(event.message).toContain(`MaintenancePlan/${PLAN} dry-run failed`);
    expect(kustomization(PLANS).status?.lastAppliedRevision).toBe(`main@sha1:${revision}`);
    expect(planPolicies().map((p) => JSON.stringify(p.spec))).toEqual(before);
  });

  // Flux deletes the plan; Kubernetes' garbage collector then deletes the policies it owns. The two times are
  // printed: the second depends on the collector having the plan's kind mapped (see beforeAll).
  it('deleting the plan from Git prunes it, and its RotationPolicies go', async () => {
    fleet.remove(PLAN_FILE);
    fleet.push('e2e plan: removed');
    const started = Date.now();
    requestSync();
    await waitFor('the plan deleted', () => getJson<{ items: Obj[] }>(['get', 'maintenanceplans']).items.length === 0, {
      timeoutMs: 60_000,
      describe: describeState,
    });
    const planGone = Date.now();
    await waitFor('its RotationPolicies deleted', () => planPolicies().length === 0, {
      timeoutMs: 60_000,
      describe: describeState,
    });
    const seconds = (t: number): string => ((t - started) / 1000).toFixed(1);
    console.error(`pruned: the plan gone after ${seconds(planGone)} s, its policies after ${seconds(Date.now())} s`);
  });
});
