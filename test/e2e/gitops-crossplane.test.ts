// The Crossplane leg of the GitOps path, with the real thing: Crossplane core v2.2.1 out of cluster, our
// function delivered as a package through a local OCI registry and served on loopback with mutual TLS
// (`cluster.sh crossplane up`, docs/gitops.md). Applying examples/crossplane/ and the example plan composes one
// RotationPolicy per governed NodePool; edits, an infeasible plan, a new NodePool and deletion behave as
// docs/function.md says. The expected policies come from the function's own pure handler over the NodePools
// actually in the cluster, so the test checks what Crossplane made of the answer, not the figures again.
import { X509Certificate } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse, stringify } from 'yaml';
import type { JsonObject } from '../../functions/json.js';
import { planRequest } from '../../functions/request.js';
import { run } from '../../functions/run.js';
import { startOfUtcDay } from '../../functions/server.js';
import { repoRoot } from './helpers/cluster.js';
import { crossplaneDown, crossplaneUp } from './helpers/crossplane.js';
import { kubectl } from './helpers/kubectl.js';
import { awaitGraveyard, Kube, waitFor } from './helpers/k8s.js';

const EXAMPLES = join(repoRoot, 'examples');
const PLAN_CRD = 'maintenanceplans.noderotation.io';
/**
 * Crossplane re-runs the pipeline after the function's meta.ttl (10 s here: crossplane-core.sh passes
 * --response-ttl 10s), jittered ±10 %, plus a reconcile: well inside a minute.
 */
const TTL_WAIT_MS = 60_000;

interface Meta {
  name: string;
  uid?: string;
  resourceVersion?: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  ownerReferences?: { apiVersion: string; kind: string; name: string; uid: string; controller?: boolean }[];
}
interface Obj {
  apiVersion: string;
  kind: string;
  metadata: Meta;
  spec?: JsonObject;
  status?: { conditions?: { type: string; status: string; reason?: string; message?: string }[] };
}

const plan = parse(readFileSync(join(EXAMPLES, 'crossplane/xr.yaml'), 'utf8')) as Obj;
const examplePools = readFileSync(join(EXAMPLES, 'nodepools.yaml'), 'utf8');
const poolNames = ['general', 'api', 'batch', 'gpu'];
const NEW_POOL = 'gitops-new';

const getJson = <T>(args: string[]): T => JSON.parse(kubectl([...args, '-o', 'json'])) as T;
const apply = (doc: unknown): string => kubectl(['apply', '-f', '-'], stringify(doc));
const planPolicies = (): Obj[] =>
  getJson<{ items: Obj[] }>(['get', 'rotationpolicies', '-l', `noderotation.io/plan=${plan.metadata.name}`]).items;
const getPlan = (): Obj => getJson<Obj>(['get', 'maintenanceplan', plan.metadata.name]);
const condition = (o: Obj, type: string) => o.status?.conditions?.find((c) => c.type === type);

/** What the function answers for `spec` over the NodePools now in the cluster: name → RotationPolicy. */
function expectedPolicies(spec: JsonObject): Map<string, Obj> {
  const nodePools = getJson<{ items: JsonObject[] }>(['get', 'nodepools']).items;
  const rsp = run(planRequest({ composite: { ...plan, spec } as unknown as JsonObject, nodePools }), {
    calendarStart: startOfUtcDay(Date.now()),
  });
  const out = new Map<string, Obj>();
  for (const r of Object.values(rsp.desired?.resources ?? {})) {
    const policy = r.resource as unknown as Obj;
    out.set(policy.metadata.name, policy);
  }
  return out;
}

/** The cluster's policies of the plan match the function's answer: names, specs, labels, figure annotations. */
function matches(expected: Map<string, Obj>): boolean {
  const actual = planPolicies();
  if (actual.length !== expected.size) return false;
  return actual.every((p) => {
    const e = expected.get(p.metadata.name);
    if (!e) return false;
    const ours = Object.fromEntries(
      Object.entries(p.metadata.annotations ?? {}).filter(([k]) => k.startsWith('noderotation.io/')),
    );
    return (
      JSON.stringify(p.spec) === JSON.stringify(e.spec) &&
      JSON.stringify(ours) === JSON.stringify(e.metadata.annotations ?? {}) &&
      p.metadata.labels?.['noderotation.io/plan'] === plan.metadata.name
    );
  });
}

const describeState = (): string =>
  `plan conditions ${JSON.stringify(getPlan().status?.conditions)}; policies ` +
  planPolicies()
    .map((p) => p.metadata.name)
    .join(', ');

const crdExists = (name: string): boolean => kubectl(['get', 'crd', name, '--ignore-not-found']).trim() !== '';

async function crdGone(name: string): Promise<void> {
  await waitFor(`CRD ${name} deleted`, () => !crdExists(name), { timeoutMs: 60_000 });
}

describe('Crossplane core composes RotationPolicies from a MaintenancePlan through the function', () => {
  beforeAll(async () => {
    // The example plan governs every NodePool: the ones earlier tests deleted must be gone first.
    await awaitGraveyard(new Kube());
    crossplaneUp();
    // The XRD defines maintenanceplans.noderotation.io itself; the plain CRD (deploy/crds) that other tests
    // install must go first, or Crossplane would adopt a CRD it did not make.
    if (crdExists(PLAN_CRD)) {
      kubectl(['delete', 'maintenanceplans.noderotation.io', '--all', '--wait=true']);
      kubectl(['delete', 'crd', PLAN_CRD, '--wait=true']);
      await crdGone(PLAN_CRD);
    }
    kubectl([
      'apply',
      '--server-side',
      '--force-conflicts',
      '-f',
      join(repoRoot, 'deploy/crds/noderotation.io_rotationpolicies.yaml'),
    ]);
    for (const f of ['xrd.yaml', 'composition.yaml', 'clusterrole.yaml']) {
      kubectl(['apply', '-f', join(EXAMPLES, 'crossplane', f)]);
    }
    kubectl(['wait', '--for=condition=Established', '--timeout=120s', `xrd/${PLAN_CRD}`]);
    kubectl(['apply', '-f', '-'], examplePools);
  });

  afterAll(async () => {
    if (crdExists(PLAN_CRD)) {
      kubectl(['delete', 'maintenanceplan', plan.metadata.name, '--ignore-not-found', '--wait=true']);
    }
    kubectl(['delete', 'nodepool', ...poolNames, NEW_POOL, '--ignore-not-found', '--wait=false']);
    kubectl(['delete', '-f', join(EXAMPLES, 'crossplane/composition.yaml'), '--ignore-not-found']);
    kubectl(['delete', '-f', join(EXAMPLES, 'crossplane/clusterrole.yaml'), '--ignore-not-found']);
    kubectl(['delete', 'xrd', PLAN_CRD, '--ignore-not-found', '--wait=true']);
    await crdGone(PLAN_CRD);
    crossplaneDown();
    // Leave the cluster as the other tests expect it: our own CRDs installed.
    kubectl(['apply', '--server-side', '--force-conflicts', '-f', join(repoRoot, 'deploy/crds')]);
  });

  // The certificates are init's own (cluster.sh deletes its Secrets before init): Crossplane's client
  // certificate carries its CA's subject and no authority key identifier, the one OpenSSL alone would refuse
  // as self-signed (docs/function.md, "Mutual TLS"), so the compositions below prove the function accepts it.
  it('Crossplane calls with the client certificate crossplane core init issued', () => {
    const pem = (secret: string): string =>
      kubectl(['get', 'secret', secret, '-n', 'crossplane-system', '-o', 'go-template={{index .data "tls.crt"}}']);
    const client = new X509Certificate(Buffer.from(pem('crossplane-tls-client'), 'base64'));
    const ca = new X509Certificate(Buffer.from(pem('crossplane-root-ca'), 'base64'));
    expect(client.subject).toBe(ca.subject);
    expect(client.issuer).toBe(ca.subject);
    expect(client.verify(ca.publicKey)).toBe(true);
    expect(client.toString()).not.toBe(ca.toString());
  });

  it('composes one RotationPolicy per governed NodePool, with the figures and an owner reference', async () => {
    apply(plan);
    const expected = expectedPolicies(plan.spec ?? {});
    // gpu is excluded by the plan's rule; every other NodePool in the cluster is governed.
    expect([...expected.keys()]).toContain('platform-general');
    expect([...expected.keys()]).not.toContain('platform-gpu');
    await waitFor('the plan’s RotationPolicies', () => matches(expected), {
      timeoutMs: 60_000,
      describe: describeState,
    });
    const xr = getPlan();
    for (const p of planPolicies()) {
      expect(p.metadata.ownerReferences).toEqual([
        expect.objectContaining({
          apiVersion: 'noderotation.io/v1alpha1',
          kind: 'MaintenancePlan',
          name: plan.metadata.name,
          uid: xr.metadata.uid,
          controller: true,
        }),
      ]);
    }
    const general = planPolicies().find((p) => p.metadata.name === 'platform-general');
    // The worked figures for weekday nights in Tokyo (P = Fri 23:00 → Mon 23:00) and expireAfter 336h.
    expect(general?.metadata.annotations).toMatchObject({
      'noderotation.io/window-period': '72h0m0s',
      'noderotation.io/guaranteed-chances': '2',
    });
    await waitFor('the XR Synced and PlanValid', () => {
      const x = getPlan();
      return condition(x, 'Synced')?.status === 'True' && condition(x, 'PlanValid')?.status === 'True';
    });
  });

  it('updates the policies when the plan is edited', async () => {
    const edited = structuredClone(plan);
    const rules = edited.spec?.rules as { name: string; overrides?: { surge?: { readyTimeout?: string } } }[];
    const strict = rules.find((r) => r.name === 'api-strict');
    if (!strict?.overrides?.surge) throw new Error('xr.yaml no longer has the api-strict rule this test edits');
    strict.overrides.surge.readyTimeout = '25m';
    apply(edited);
    const expected = expectedPolicies(edited.spec ?? {});
    await waitFor('the edited plan’s RotationPolicies', () => matches(expected), {
      timeoutMs: 60_000,
      describe: describeState,
    });
    const api = planPolicies().find((p) => p.metadata.name === 'platform-api');
    expect((api?.spec?.surge as { readyTimeout?: string }).readyTimeout).toBe('25m');
    // t_rot = readyTimeout + terminationGracePeriod (30m) + 2m.
    expect(api?.metadata.annotations?.['noderotation.io/rotation-bound']).toBe('57m0s');
  });

  // Crossplane does not watch required resources: the NodePool reaches the function on the next run, which
  // comes at the latest after the response TTL (docs/gitops.md). It can come sooner when the XR happens to be
  // reconciled for another reason (the previous test's writes echo back as watch events): either way, no one
  // touches the plan here.
  it('picks up a new NodePool with no change to the plan, at the latest after the response TTL', async () => {
    kubectl(
      ['apply', '-f', '-'],
      stringify({
        apiVersion: 'karpenter.sh/v1',
        kind: 'NodePool',
        metadata: { name: NEW_POOL, labels: { tier: 'general' } },
        spec: {
          template: {
            spec: {
              expireAfter: '336h',
              terminationGracePeriod: '1h',
              requirements: [{ key: 'karpenter.sh/capacity-type', operator: 'In', values: ['on-demand'] }],
              nodeClassRef: { group: 'karpenter.kwok.sh', kind: 'KWOKNodeClass', name: 'default' },
            },
          },
        },
      }),
    );
    const started = Date.now();
    await waitFor(
      `RotationPolicy platform-${NEW_POOL}`,
      () => planPolicies().some((p) => p.metadata.name === `platform-${NEW_POOL}`),
      { timeoutMs: TTL_WAIT_MS, intervalMs: 1000, describe: describeState },
    );
    console.error(`new NodePool picked up after ${Math.round((Date.now() - started) / 1000)} s`);
  });

  it('an infeasible plan sets Synced=False with the FATAL message and leaves the policies as they were', async () => {
    const before = new Map(planPolicies().map((p) => [p.metadata.name, p.metadata.resourceVersion]));
    const infeasible = structuredClone(plan);
    (infeasible.spec?.defaults as { minRotationChances: number }).minRotationChances = 5;
    apply(infeasible);
    const synced = await waitFor(
      'the XR Synced=False',
      () => {
        const c = condition(getPlan(), 'Synced');
        return c?.status === 'False' ? c : undefined;
      },
      { timeoutMs: 60_000, describe: describeState },
    );
    // The first FATAL result, as the function words it (fatal results are ordered by NodePool).
    expect(synced.message).toContain(
      'pipeline step "rotation-policies" returned a fatal result: ' +
        'NodePool batch (RotationPolicy platform-batch, rule batch-weekends): ' +
        'NodePool field spec.template.spec.expireAfter: ' +
        'expireAfter 720h is not longer than the lead time K·P + t_rot = 5×145h + 2h17m = 727h17m',
    );
    expect(condition(getPlan(), 'PlanValid')).toMatchObject({ status: 'False', reason: 'NonPositiveAgeThreshold' });
    const after = new Map(planPolicies().map((p) => [p.metadata.name, p.metadata.resourceVersion]));
    expect(after).toEqual(before);
  });

  it('deleting the plan removes its policies', async () => {
    expect(planPolicies().length).toBeGreaterThan(0);
    kubectl(['delete', 'maintenanceplan', plan.metadata.name, '--wait=false']);
    await waitFor('the plan’s RotationPolicies deleted', () => planPolicies().length === 0, {
      describe: describeState,
    });
  });
});
