// --from-cluster without a cluster: how the cluster's objects and the -f files combine (a file replaces the
// cluster's object of the same kind and name; a plan's composed policies give way to the plan), and how a
// kubeconfig that cannot be used is refused. The reads themselves run against the real apiserver in
// test/e2e/cli-from-cluster.test.ts.
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { clusterConfig, type ClusterObjects } from './cluster.js';
import { readCommandInputs } from './inputs.js';
import { planLabelValue } from '../src/plan/expand.js';
import type { Io } from './process.js';

const dir = mkdtempSync(join(tmpdir(), 'nr-cluster-unit-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const WINDOWS = [{ timezone: 'UTC', days: ['Sat'], start: '02:00', end: '06:00' }];
const pool = (name: string, expireAfter: string) => ({
  apiVersion: 'karpenter.sh/v1',
  kind: 'NodePool',
  metadata: { name },
  spec: { template: { spec: { expireAfter, terminationGracePeriod: '1h' } } },
});
const policy = (name: string, extra: Record<string, unknown> = {}) => ({
  apiVersion: 'noderotation.io/v1alpha1',
  kind: 'RotationPolicy',
  metadata: { name, ...extra },
  spec: { nodePools: ['general'], maintenanceWindows: WINDOWS },
});
const plan = (name: string) => ({
  apiVersion: 'noderotation.io/v1alpha1',
  kind: 'MaintenancePlan',
  metadata: { name },
  spec: { nodePoolSelector: {}, defaults: { maintenanceWindows: WINDOWS } },
});

function io(): Io & { err: () => string } {
  let err = '';
  return {
    stdout: { write: () => true },
    stderr: { write: (t: string) => (err += t) },
    now: () => 0,
    readStdin: () => '',
    err: () => err,
  };
}

const cluster = (objects: Record<string, unknown>[]): ClusterObjects => ({
  source: 'cluster (context test)',
  objects,
  notes: [],
});

describe('the cluster’s objects under the -f files', () => {
  it('a file replaces the cluster’s object of the same kind and name; the rest is read from the cluster', () => {
    const file = join(dir, 'changed.yaml');
    writeFileSync(file, JSON.stringify(pool('general', '72h')));
    const out = io();
    const inputs = readCommandInputs(
      [file],
      out,
      cluster([pool('general', '720h'), pool('batch', '720h'), policy('p')]),
    );
    expect(inputs.errors).toEqual([]);
    expect(inputs.nodePools.map((p) => [p.metadata.name, p.spec.template.spec.expireAfter])).toEqual([
      ['batch', '720h'],
      ['general', '72h'],
    ]);
    expect(inputs.policies.map((p) => [p.metadata.name, p.source.file])).toEqual([['p', 'cluster (context test)']]);
    expect(out.err()).toContain("1 object(s) from -f replace the cluster (context test)'s of the same kind and name");
  });

  it('policies composed from a plan in the input give way to the plan (by owner or composite label)', () => {
    const owned = policy('plan-a-general', { ownerReferences: [{ kind: 'MaintenancePlan', name: 'plan-a' }] });
    const labelled = policy('plan-a-batch', { labels: { 'crossplane.io/composite': 'plan-a' } });
    const other = policy('plan-b-gpu', { ownerReferences: [{ kind: 'MaintenancePlan', name: 'plan-b' }] });
    const out = io();
    const inputs = readCommandInputs(
      [],
      out,
      cluster([pool('general', '720h'), plan('plan-a'), owned, labelled, other]),
    );
    expect(inputs.plans.map((p) => p.metadata.name)).toEqual(['plan-a']);
    // plan-b is not in the input, so its policy stays: it is all there is of it.
    expect(inputs.policies.map((p) => p.metadata.name)).toEqual(['plan-b-gpu']);
    expect(out.err()).toContain('2 RotationPolicy(ies) composed from MaintenancePlans are computed from the plans');
  });

  it('a policy rendered from a plan in the input and applied gives way too (its plan label, shortened past 63)', () => {
    const long = `plan-${'x'.repeat(70)}`;
    const rendered = policy('rendered-general', { labels: { 'noderotation.io/plan': planLabelValue(long) } });
    const other = policy('plan-b-gpu', { labels: { 'noderotation.io/plan': 'plan-b' } });
    const out = io();
    const inputs = readCommandInputs([], out, cluster([pool('general', '720h'), plan(long), rendered, other]));
    expect(planLabelValue(long)).not.toBe(long);
    expect(inputs.policies.map((p) => p.metadata.name)).toEqual(['plan-b-gpu']);
    expect(out.err()).toContain('1 RotationPolicy(ies) composed from MaintenancePlans are computed from the plans');
  });

  it('a cluster object that fails validation is named by the cluster and its position, like a file', () => {
    const inputs = readCommandInputs([], io(), cluster([pool('general', '1.5h')]));
    expect(inputs.errors[0]).toMatchObject({
      file: 'cluster (context test)',
      document: 1,
      path: 'spec.template.spec.expireAfter',
    });
  });
});

describe('problems of both sources', () => {
  it('the cluster’s and the files’ errors are both reported, the cluster’s first', () => {
    const file = join(dir, 'broken.yaml');
    writeFileSync(file, JSON.stringify(pool('batch', 'soon')));
    const inputs = readCommandInputs([file], io(), cluster([pool('general', '1.5h')]));
    expect(inputs.errors.map((e) => [e.file, e.path])).toEqual([
      ['cluster (context test)', 'spec.template.spec.expireAfter'],
      [file, 'spec.template.spec.expireAfter'],
    ]);
  });
});

describe('the kubeconfig, as kubectl resolves it', () => {
  const KUBECONFIG = join(dir, 'kubeconfig');
  writeFileSync(
    KUBECONFIG,
    JSON.stringify({
      apiVersion: 'v1',
      kind: 'Config',
      clusters: [{ name: 'c', cluster: { server: 'https://127.0.0.1:1' } }],
      users: [{ name: 'u', user: { token: 't' } }],
      contexts: [
        { name: 'one', context: { cluster: 'c', user: 'u' } },
        { name: 'two', context: { cluster: 'c', user: 'u' } },
      ],
      'current-context': 'one',
    }),
  );

  it.each([
    {
      reason: 'KUBECONFIG, current context',
      flags: {},
      env: { KUBECONFIG },
      context: 'one',
    },
    { reason: '--context picks another', flags: { context: 'two' }, env: { KUBECONFIG }, context: 'two' },
    {
      reason: '--kubeconfig over KUBECONFIG',
      flags: { kubeconfig: KUBECONFIG },
      env: { KUBECONFIG: '/x' },
      context: 'one',
    },
    { reason: '~/.kube/config when nothing else', flags: {}, env: { HOME: homeWith(KUBECONFIG) }, context: 'one' },
  ])('$reason', ({ flags, env, context }) => {
    expect(clusterConfig(flags, env).getCurrentContext()).toBe(context);
  });

  it.each([
    {
      reason: 'an unknown context',
      flags: { context: 'three' },
      env: { KUBECONFIG },
      error: /--from-cluster: cannot load KUBECONFIG .*: --context three: no such context; the kubeconfig has one, two/,
    },
    {
      reason: 'a missing file',
      flags: { kubeconfig: join(dir, 'nope') },
      env: {},
      error: /cannot load --kubeconfig .*nope/,
    },
    { reason: 'nothing to read', flags: {}, env: {}, error: /no kubeconfig: pass --kubeconfig FILE, set KUBECONFIG/ },
  ])('refused: $reason', ({ flags, env, error }) => {
    expect(() => clusterConfig(flags, env)).toThrow(error);
  });
});

/** A HOME whose .kube/config is `file`'s content. */
function homeWith(file: string): string {
  const home = join(dir, 'home');
  const kube = join(home, '.kube');
  mkdirSync(kube, { recursive: true });
  writeFileSync(join(kube, 'config'), readFileSync(file));
  return home;
}
