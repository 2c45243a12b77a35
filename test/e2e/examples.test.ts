// Every Kubernetes manifest under examples/ is accepted by a real apiserver with the real CRDs: Karpenter's
// (installed by cluster.sh), ours (deploy/crds), Crossplane's (from the Crossplane module cluster.sh builds the
// CLI from), Argo CD's Application (from the argo-cd module, for examples/argocd) and Flux's GitRepository and
// Kustomization (kept beside the controllers cluster.sh builds, for examples/flux). Server-side dry-run with
// strict field validation, one document at a time, so a failure names the file, the document and the object,
// and nothing is created.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { readClusterEnv, repoRoot } from './helpers/cluster.js';
import { argocdCrdsDir, fluxCrdsDirs } from './helpers/crds.js';
import { waitFor } from './helpers/k8s.js';
import { kubectlResult as kubectl } from './helpers/kubectl.js';

const env = readClusterEnv();
const EXAMPLES = join(repoRoot, 'examples');

/** Directories under examples/ that hold no Kubernetes objects, each with why. */
const EXCLUDED: { dir: string; reason: string }[] = [
  {
    dir: 'scenarios',
    reason: 'simulator input (`noderotation simulate`), kind Scenario: no apiserver serves it',
  },
];

/**
 * Crossplane's CRDs for the kinds the Crossplane examples use. The XR (examples/crossplane/xr.yaml) needs none
 * of them: it is a MaintenancePlan, checked against our own CRD, which is generated from the same schema as the
 * XRD; Crossplane's XRD controller (not running here) would serve an equivalent one.
 */
const CROSSPLANE_CRDS = [
  'apiextensions.crossplane.io_compositeresourcedefinitions.yaml',
  'apiextensions.crossplane.io_compositions.yaml',
  'pkg.crossplane.io_functions.yaml',
];

interface ExampleDoc {
  /** `<file>#<n> <Kind>/<name>`, n counting from 1. */
  title: string;
  text: string;
}

function yamlFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true })
    .sort((a, b) => a.name.localeCompare(b.name))
    .flatMap((e) => {
      const path = join(dir, e.name);
      if (e.isDirectory()) {
        return EXCLUDED.some((x) => join(EXAMPLES, x.dir) === path) ? [] : yamlFiles(path);
      }
      return /\.ya?ml$/.test(e.name) ? [path] : [];
    });
}

/**
 * The documents of a file as their own text (what `kubectl apply -f` reads, so kubectl's YAML parser sees
 * exactly what a user's would), skipping documents that hold only comments.
 */
function documents(file: string): ExampleDoc[] {
  const rel = relative(repoRoot, file);
  return readFileSync(file, 'utf8')
    .split(/^---[ \t]*$/m)
    .map((text, i) => ({ text, n: i + 1, obj: parse(text) as unknown }))
    .filter(({ obj }) => obj !== null && obj !== undefined)
    .map(({ text, n, obj }) => {
      const { kind, metadata } = (obj ?? {}) as { kind?: unknown; metadata?: { name?: unknown } };
      return { title: `${rel}#${n} ${String(kind)}/${String(metadata?.name)}`, text };
    });
}

const docs = yamlFiles(EXAMPLES).flatMap(documents);

/** Argo CD's Application CRD, from the argo-cd module cluster.sh keeps in its cache (examples/argocd). */
const ARGOCD_CRD = join(argocdCrdsDir(), 'application-crd.yaml');
/** The namespace the Argo CD examples live in; created for the dry-run and removed after it. */
const ARGOCD_NAMESPACE = 'argocd';
/** Flux's CRDs for examples/flux, and the namespace those examples live in (created and removed likewise). */
const FLUX_CRDS = {
  'gitrepositories.source.toolkit.fluxcd.io': join(
    fluxCrdsDirs().source,
    'source.toolkit.fluxcd.io_gitrepositories.yaml',
  ),
  'kustomizations.kustomize.toolkit.fluxcd.io': join(
    fluxCrdsDirs().kustomize,
    'kustomize.toolkit.fluxcd.io_kustomizations.yaml',
  ),
};
const FLUX_NAMESPACE = 'flux-system';

async function established(crd: string): Promise<void> {
  await waitFor(
    `CRD ${crd} Established`,
    () =>
      kubectl(['get', 'crd', crd, '-o', 'jsonpath={.status.conditions[?(@.type=="Established")].status}']).out ===
      'True',
    { timeoutMs: 60_000 },
  );
}

const crdName = (file: string): string => {
  const [group, plural] = file.replace(/\.yaml$/, '').split('_');
  return `${String(plural)}.${String(group)}`;
};

describe('every example manifest on a real apiserver (server-side dry-run)', () => {
  beforeAll(async () => {
    const ours = kubectl(['apply', '--server-side', '-f', join(repoRoot, 'deploy/crds')]);
    expect(ours.code, ours.err).toBe(0);
    const crossplane = kubectl([
      'apply',
      '--server-side',
      ...CROSSPLANE_CRDS.flatMap((f) => ['-f', join(env.crossplaneCrds, f)]),
    ]);
    expect(crossplane.code, crossplane.err).toBe(0);
    const argocd = kubectl(['apply', '--server-side', '-f', ARGOCD_CRD]);
    expect(argocd.code, argocd.err).toBe(0);
    const flux = kubectl(['apply', '--server-side', ...Object.values(FLUX_CRDS).flatMap((f) => ['-f', f])]);
    expect(flux.code, flux.err).toBe(0);
    for (const name of [ARGOCD_NAMESPACE, FLUX_NAMESPACE]) {
      const ns = kubectl(['create', 'namespace', name]);
      expect(ns.code === 0 || ns.err.includes('AlreadyExists'), ns.err).toBe(true);
    }
    for (const crd of [
      'rotationpolicies.noderotation.io',
      'maintenanceplans.noderotation.io',
      ...CROSSPLANE_CRDS.map(crdName),
      'applications.argoproj.io',
      ...Object.keys(FLUX_CRDS),
    ]) {
      await established(crd);
    }
  });

  afterAll(() => {
    // Nothing else in the suite uses Crossplane's or Flux's CRDs (gitops-flux.test.ts applies them again through
    // `cluster.sh flux up`); ours stay, as crds.test.ts leaves them.
    kubectl([
      'delete',
      'crd',
      '--ignore-not-found',
      ...CROSSPLANE_CRDS.map(crdName),
      'applications.argoproj.io',
      ...Object.keys(FLUX_CRDS),
    ]);
    kubectl(['delete', 'namespace', '--ignore-not-found', '--wait=false', ARGOCD_NAMESPACE, FLUX_NAMESPACE]);
  });

  it('finds the examples, and every excluded directory still exists', () => {
    expect(docs.length).toBeGreaterThan(0);
    for (const x of EXCLUDED) expect(existsSync(join(EXAMPLES, x.dir)), `examples/${x.dir} (${x.reason})`).toBe(true);
  });

  it.each(docs)('$title', ({ title, text }) => {
    const r = kubectl(
      [
        'apply',
        '--server-side',
        '--dry-run=server',
        '--validate=strict',
        '--field-manager=noderotation-e2e',
        '-f',
        '-',
      ],
      text,
    );
    expect(r.code, `${title} rejected:\n${r.err}`).toBe(0);
  });
});
