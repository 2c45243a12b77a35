// `explain`/`validate`/`render --from-cluster` against the real apiserver: the same figures as the offline
// command on the same objects exported with kubectl; a file given with -f replaces the cluster's object (a
// what-if that shortens expireAfter below the lead time is flagged); a read that RBAC denies, a missing
// context and an unreadable kubeconfig are each one clear line and exit 2. `status` shows the rotation the
// controller has in flight, as the objects and the policy's status say.
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { parse, stringify } from 'yaml';
import { main } from '../../cli/main.js';
import type { RotationPolicySpec } from '../../src/generated/api-types.js';
import type { PoolStatus } from '../../src/status/fleet-status.js';
import type { PoolWhatIf } from '../../src/simulate/what-if.js';
import { readClusterEnv, repoRoot } from './helpers/cluster.js';
import { limitedPoolWithApp, ON_DEMAND_AMD64, poolWithApp } from './helpers/context.js';
import { ALWAYS_OPEN, useController } from './helpers/controller-context.js';
import { waitFor } from './helpers/k8s.js';
import { kubectl } from './helpers/kubectl.js';
import { tokenKubeconfig } from './helpers/noderotation-api.js';

const NOW = '2026-12-01T12:00:00Z';
const WINDOWS: RotationPolicySpec['maintenanceWindows'] = [
  { timezone: 'Asia/Tokyo', days: ['Wed', 'Sat'], start: '02:00', end: '06:00' },
];

async function cli(argv: string[], env: NodeJS.ProcessEnv = {}) {
  let stdout = '';
  let stderr = '';
  const code = await main(argv, {
    stdout: { write: (t: string) => (stdout += t) },
    stderr: { write: (t: string) => (stderr += t) },
    env,
  });
  return { code, stdout, stderr };
}

describe('the CLI reads the cluster it is pointed at', () => {
  const ctx = useController();
  const { kube, res } = ctx;
  const dir = mkdtempSync(path.join(tmpdir(), 'nr-from-cluster-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('explain --from-cluster = explain -f on the kubectl export; -f overrides; RBAC, context, kubeconfig', async () => {
    const { kubeconfig } = readClusterEnv();
    const { pool } = await poolWithApp(kube, res, 'e2e-cli', ON_DEMAND_AMD64);
    await ctx.policy(`${pool}-policy`, { nodePools: [pool], maintenanceWindows: WINDOWS });

    // The same objects, exported the way a person would, and read from the cluster.
    const exported = path.join(dir, 'export.yaml');
    writeFileSync(exported, kubectl(['get', 'nodepools,nodeclaims,rotationpolicies', '-o', 'yaml']));
    const offline = await cli(['explain', '-f', exported, '-o', 'json', '--now', NOW]);
    const live = await cli(['explain', '--from-cluster', '-o', 'json', '--now', NOW], { KUBECONFIG: kubeconfig });
    expect(offline.code, offline.stderr).toBe(0);
    expect(live.code, live.stderr).toBe(0);
    // Karpenter may change other objects between the export and the read; the row of the pool this test owns,
    // figures and findings, must be identical.
    const mine = row(live.stdout, pool);
    expect(mine).toEqual(row(offline.stdout, pool));
    expect(mine).toMatchObject({ policy: `${pool}-policy` });
    expect(mine?.ageThresholdSeconds).toBeGreaterThan(0);
    // --kubeconfig and --context name the same cluster explicitly.
    const explicit = await cli(
      ['explain', '--from-cluster', '--kubeconfig', kubeconfig, '--context', currentContext(kubeconfig)].concat([
        '-o',
        'json',
        '--now',
        NOW,
      ]),
      {},
    );
    expect(row(explicit.stdout, pool)).toEqual(mine);

    // What if the NodePool's expireAfter were 3 days? Below K·P + t_rot for windows 3–4 days apart: fatal.
    const np = JSON.parse(kubectl(['get', 'nodepool', pool, '-o', 'json'])) as {
      spec: { template: { spec: { expireAfter: string } } };
    };
    np.spec.template.spec.expireAfter = '72h';
    const changed = path.join(dir, 'changed-nodepool.yaml');
    writeFileSync(changed, stringify(np));
    const whatIf = await cli(['validate', '--from-cluster', '-f', changed, '--now', NOW], { KUBECONFIG: kubeconfig });
    expect(whatIf.code, whatIf.stdout + whatIf.stderr).toBe(1);
    expect(whatIf.stdout).toMatch(new RegExp(`FATAL ${pool} NonPositiveAgeThreshold`));
    expect(whatIf.stderr).toContain('1 object(s) from -f replace the cluster (context');
    // The cluster itself was only read: its NodePool is unchanged.
    expect(kubectl(['get', 'nodepool', pool, '-o', 'jsonpath={.spec.template.spec.expireAfter}'])).toBe('720h');

    // simulate --from-cluster: the live fleet under the policy as it is and suspended, side by side.
    const suspended = path.join(dir, 'suspended-policy.yaml');
    writeFileSync(
      suspended,
      stringify({
        apiVersion: 'noderotation.io/v1alpha1',
        kind: 'RotationPolicy',
        metadata: { name: `${pool}-policy` },
        spec: { nodePools: [pool], maintenanceWindows: WINDOWS, suspend: true },
      }),
    );
    const sim = await cli(
      ['simulate', '--from-cluster', '-f', suspended, '--duration', '60d', '-o', 'json', '--now', NOW],
      { KUBECONFIG: kubeconfig },
    );
    expect(sim.code, sim.stderr).toBe(0);
    const diff = (JSON.parse(sim.stdout) as { nodePools: PoolWhatIf[] }).nodePools.find((p) => p.nodePool === pool);
    // Before: rotated in a window (and its replacement too, within 60 days); after: Karpenter expires it.
    expect(diff?.before).toMatchObject({ policy: `${pool}-policy`, nodes: 1, forcefulExpirations: 0, nodesAtRisk: 0 });
    expect(diff?.before.graceful).toBeGreaterThanOrEqual(1);
    expect(diff?.after).toMatchObject({ nodes: 1, graceful: 0, nodesAtRisk: 1 });
    expect(diff?.after.forcefulExpirations).toBeGreaterThanOrEqual(1);
    expect(Date.parse(diff!.firstChange!)).toBeGreaterThan(Date.parse(NOW));

    // A ServiceAccount with no rights: the first denied list is named, with what it needs.
    const ns = await res.namespace('e2e-cli-rbac');
    kubectl(['create', 'serviceaccount', 'nobody', '-n', ns]);
    const denied = await cli(['explain', '--from-cluster', '--kubeconfig', tokenKubeconfig(ns, 'nobody')]);
    expect(denied.code).toBe(2);
    expect(denied.stderr).toMatch(/cannot list nodepools\.karpenter\.sh in cluster \(context e2e\): forbidden \(403/);
    expect(denied.stderr).toContain('this needs get/list on nodepools.karpenter.sh, or pass the objects with -f');
    expect(denied.stdout).toBe('');

    const noContext = await cli(['explain', '--from-cluster', '--context', 'nope'], { KUBECONFIG: kubeconfig });
    expect(noContext.code).toBe(2);
    expect(noContext.stderr).toMatch(/--context nope: no such context; the kubeconfig has /);
    const noFile = await cli(['explain', '--from-cluster', '--kubeconfig', path.join(dir, 'missing')]);
    expect(noFile.code).toBe(2);
    expect(noFile.stderr).toContain(`--from-cluster: cannot load --kubeconfig ${path.join(dir, 'missing')}`);
  });

  it('the kubectl plugin, installed as the README says (a link named kubectl-noderotation on PATH)', async () => {
    const env = readClusterEnv();
    const { pool } = await poolWithApp(kube, res, 'e2e-cli-plugin', ON_DEMAND_AMD64);
    await ctx.policy(`${pool}-policy`, { nodePools: [pool], maintenanceWindows: WINDOWS });
    const bin = path.join(dir, 'plugin-bin');
    mkdirSync(bin, { recursive: true });
    symlinkSync(path.join(repoRoot, 'bin/kubectl-noderotation.js'), path.join(bin, 'kubectl-noderotation'));
    const run = (args: string[]) =>
      spawnSync(env.kubectl, args, {
        encoding: 'utf8',
        env: { ...process.env, PATH: `${bin}:${process.env.PATH ?? ''}`, KUBECONFIG: env.kubeconfig },
      });
    const list = run(['plugin', 'list']);
    expect(list.stdout).toContain(path.join(bin, 'kubectl-noderotation'));
    const version = run(['noderotation', 'version']);
    expect(version.status, version.stderr).toBe(0);
    expect(version.stdout).toMatch(/^noderotation \d+\.\d+\.\d+/);
    // kubectl's own flags are not passed on: the plugin reads the cluster KUBECONFIG names, as kubectl does.
    const explain = run(['noderotation', 'explain', '-o', 'json', '--now', NOW]);
    expect(explain.status, explain.stderr).toBeLessThanOrEqual(1);
    const rows = (JSON.parse(explain.stdout) as { nodePools: { nodePool: string; policy: string | null }[] }).nodePools;
    expect(rows.find((r) => r.nodePool === pool)?.policy).toBe(`${pool}-policy`);
  });

  it('status shows the rotation the controller has in flight: claim, phase, since; the controller’s view', async () => {
    const { kubeconfig } = readClusterEnv();
    // No room for a surge: the rotation stays pending (waiting for its surge node) until readyTimeout.
    const { ns, pool, claim } = await limitedPoolWithApp(kube, res, 'e2e-cli-st');
    await ctx.policy(`${pool}-policy`, {
      nodePools: [pool],
      maintenanceWindows: ALWAYS_OPEN,
      ageThreshold: '1s',
      surge: { readyTimeout: '10m' },
    });
    const controller = await ctx.controller(ns);
    const status = async (): Promise<PoolStatus | undefined> => {
      const r = await cli(['status', '--from-cluster', '-o', 'json'], { KUBECONFIG: kubeconfig });
      expect(r.code, r.stderr).toBe(0);
      return (JSON.parse(r.stdout) as { nodePools: PoolStatus[] }).nodePools.find((p) => p.nodePool === pool);
    };
    const seen = await waitFor(
      'status to show the rotation in flight and the controller’s view of it',
      async () => {
        const s = await status();
        return s?.rotation && s.controller?.waiting ? s : undefined;
      },
      { timeoutMs: 120_000, intervalMs: 1000, describe: () => controller.tail(15) },
    );
    expect(seen).toMatchObject({
      policy: `${pool}-policy`,
      windowOpen: true,
      rotation: { nodeClaim: claim.metadata.name, mode: 'surge', phase: 'pending', surgeNode: null },
      controller: { ready: { status: 'True', reason: 'Accepted' } },
    });
    const anchor = (await kube.getNodeClaim(claim.metadata.name))?.metadata.annotations ?? {};
    expect(seen.rotation?.since).toBe(anchor['noderotation.io/started-at']);
    const table = await cli(['status', '--from-cluster', '-o', 'wide'], { KUBECONFIG: kubeconfig });
    const row = table.stdout.split('\n').find((l) => l.startsWith(`${pool} `));
    expect(row).toMatch(new RegExp(`${pool}-policy +open .* ${claim.metadata.name} pending for `));
    expect(row).toContain('Accepted: ');
  });
});

/** A NodePool's row of `explain -o json`. */
function row(stdout: string, pool: string) {
  const report = JSON.parse(stdout) as {
    nodePools: { nodePool: string; policy: string | null; ageThresholdSeconds: number | null }[];
  };
  return report.nodePools.find((p) => p.nodePool === pool);
}

function currentContext(kubeconfig: string): string {
  return (parse(readFileSync(kubeconfig, 'utf8')) as { 'current-context': string })['current-context'];
}
