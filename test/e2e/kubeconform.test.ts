// The published per-version schemas (deploy/schemas, CRDs-catalog layout) with the tool users validate
// manifests with: kubeconform, strict, reading our schemas through its location template. No cluster needed;
// it lives here because kubeconform is built into the same cache as the cluster binaries.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { cachedTool, repoRoot } from './helpers/cluster.js';

const kubeconform = cachedTool('kubeconform');
const LOCATION = join(repoRoot, 'deploy/schemas/{{.Group}}/{{.ResourceKind}}_{{.ResourceAPIVersion}}.json');

function check(files: string[]): { code: number; out: string } {
  const r = spawnSync(kubeconform, ['-strict', '-summary', '-output', 'text', '-schema-location', LOCATION, ...files], {
    encoding: 'utf8',
  });
  if (r.error) throw new Error(`${kubeconform}: ${r.error.message} (\`npm run cluster -- build\` builds it)`);
  return { code: r.status ?? -1, out: `${r.stdout}${r.stderr}` };
}

describe('kubeconform with the published schemas', () => {
  it('accepts every noderotation example', () => {
    const files = [
      'rotationpolicy-worked-example.yaml',
      'rotationpolicy-weekly-fatal.yaml',
      'maintenanceplan.yaml',
    ].map((f) => join(repoRoot, 'examples', f));
    const r = check(files);
    expect(r.out).toContain('Summary: 3 resources found in 3 files - Valid: 3, Invalid: 0, Errors: 0');
    expect(r.code).toBe(0);
  });

  it.each([
    {
      reason: 'a misspelt field (closed objects)',
      spec: 'nodePools: [a]\n  maintenanceWindow: []',
      expect: 'maintenanceWindow',
    },
    {
      reason: 'a time that is not HH:MM',
      spec: 'nodePools: [a]\n  maintenanceWindows: [{timezone: UTC, days: [Sat], start: "25:00", end: "06:00"}]',
      expect: 'start',
    },
    {
      reason: 'an unknown day',
      spec: 'nodePools: [a]\n  maintenanceWindows: [{timezone: UTC, days: [Funday], start: "02:00", end: "06:00"}]',
      expect: '/spec/maintenanceWindows/0/days/0',
    },
    {
      reason: 'maxUnavailable other than 1',
      spec:
        'nodePools: [a]\n  maintenanceWindows: [{timezone: UTC, days: [Sat], start: "02:00", end: "06:00"}]\n' +
        '  surge: {maxUnavailable: 2}',
      expect: 'maxUnavailable',
    },
  ])('rejects $reason', ({ spec, expect: what }) => {
    const dir = mkdtempSync(join(tmpdir(), 'kubeconform-'));
    try {
      const file = join(dir, 'policy.yaml');
      writeFileSync(
        file,
        `apiVersion: noderotation.io/v1alpha1\nkind: RotationPolicy\nmetadata: {name: p}\nspec:\n  ${spec}\n`,
      );
      const r = check([file]);
      expect(r.code).not.toBe(0);
      expect(r.out).toContain('Invalid: 1');
      expect(r.out).toContain(what);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
