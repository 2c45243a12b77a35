// What explain, validate and render share: reading every -f, the notes on what is skipped, and the one way
// invalid input is reported (exit 2, one line per problem, a bounded number of lines).
import {
  duplicateErrors,
  formatInputError,
  mergeInputs,
  readDocuments,
  YAML_LIMITS,
  type Inputs,
} from '../src/api/documents.js';
import { PLAN_LABEL, planLabelValue, type ExpansionError } from '../src/plan/expand.js';
import { clusterConfig, nameOf, readCluster, type ClusterObjects } from './cluster.js';
import { MAX_NOTES, readInputs, type InputFile } from './io.js';
import type { ClusterOptions, FileOptions } from './program.js';
import { EXIT_INVALID, type Io } from './process.js';

/**
 * The command's inputs: every -f, and with --from-cluster the cluster's objects under them (an -f object
 * replaces the cluster's object of the same kind and name).
 */
export async function commandInputs(
  values: Partial<FileOptions> & ClusterOptions,
  io: Io,
  options: InputOptions = {},
): Promise<Inputs> {
  const withFlags = { ...options, recursive: values.recursive === true };
  // --kubeconfig and --context imply --from-cluster (program.ts), as they point kubectl at a cluster.
  if (!values.fromCluster) return readCommandInputs(values.filename ?? [], io, undefined, withFlags);
  const kc = clusterConfig({ kubeconfig: values.kubeconfig, context: values.context }, io.env ?? process.env);
  return readCommandInputs(values.filename ?? [], io, await readCluster(kc), withFlags);
}

export interface InputOptions {
  /**
   * Keep the cluster's RotationPolicies composed from MaintenancePlans (status reads what is there, with
   * the controller's status); by default they give way to the plans, which explain and render expand.
   */
  keepComposedPolicies?: boolean;
  /** -R: read the sub-directories of a -f directory too. */
  recursive?: boolean;
}

/** Every -f read and sorted by kind, over the cluster's objects if given; skipped documents are noted on stderr. */
export function readCommandInputs(
  paths: readonly string[],
  io: Io,
  cluster?: ClusterObjects,
  options: InputOptions = {},
): Inputs {
  const note = (line: string): void => void io.stderr.write(`${line}\n`);
  const files =
    cluster && paths.length === 0 ? [] : readInputs(paths, { stdin: io.readStdin, note, recursive: options.recursive });
  const inputs = cluster ? overCluster(files, cluster, note, options) : readDocuments(files);
  for (const ignored of inputs.ignored.slice(0, MAX_NOTES))
    io.stderr.write(
      `note: ${ignored.file}, document ${ignored.document}: ${ignored.kind} is not read by noderotation; skipped\n`,
    );
  if (inputs.ignored.length > MAX_NOTES)
    io.stderr.write(`note: ${inputs.ignored.length - MAX_NOTES} more documents of other kinds skipped\n`);
  return inputs;
}

export interface Problems {
  lines: string[];
  /** Problems found but not kept, so the report stays short for any input. */
  omitted: number;
}

/** The input errors as lines, duplicates included (two objects of one kind and name), at most YAML_LIMITS.errors. */
export function inputProblems(inputs: Inputs): Problems {
  const all = [...inputs.errors, ...duplicateErrors(inputs)];
  const kept = all.slice(0, YAML_LIMITS.errors);
  return { lines: kept.map(formatInputError), omitted: inputs.omittedErrors + all.length - kept.length };
}

/** explain's and calendar's input: NodePools, and a RotationPolicy or MaintenancePlan for them (else a problem). */
export function requirePoolsAndPolicies(inputs: Inputs, problems: Problems): void {
  if (problems.lines.length === 0 && inputs.nodePools.length === 0)
    problems.lines.push('no NodePools (karpenter.sh/v1) in the input: pass the NodePools the policies are for with -f');
  if (problems.lines.length === 0 && inputs.policies.length === 0 && inputs.plans.length === 0)
    problems.lines.push(
      'no RotationPolicy or MaintenancePlan (noderotation.io/v1alpha1) in the input: pass at least one with -f',
    );
}

/** A MaintenancePlan whose merged settings are not a valid RotationPolicy: each problem, and exit 2. */
export function reportPlanErrors(io: Io, errors: readonly (ExpansionError & { plan: string })[]): number {
  const lines = errors.map(
    (e) => `  MaintenancePlan ${e.plan}, NodePool ${e.nodePool}: ${e.path}: found ${e.found}; allowed: ${e.allowed}`,
  );
  io.stderr.write(`invalid input: the merged settings are not a valid RotationPolicy:\n${lines.join('\n')}\n`);
  return EXIT_INVALID;
}

/** Prints the problems under "invalid input:" (with the count of those not shown) and returns exit 2. */
export function reportInvalid(io: Io, { lines: problems, omitted }: Problems): number {
  const more = omitted > 0 ? `\n  … and ${omitted} more problems, not shown` : '';
  io.stderr.write(`invalid input:\n${problems.map((p) => `  ${p}`).join('\n')}${more}\n`);
  return EXIT_INVALID;
}

/**
 * The cluster's objects with the files' on top: a cluster object that a file also defines (same kind and
 * name) is left out, and so is a RotationPolicy made from a MaintenancePlan in the input (madeFromPlans), which
 * these commands compute from the plan itself (a changed plan would otherwise meet its own old output).
 */
function overCluster(
  files: InputFile[],
  cluster: ClusterObjects,
  note: (line: string) => void,
  options: InputOptions,
): Inputs {
  const fromFiles = readDocuments(files);
  const given = new Set(fromFiles.named.map((n) => `${n.kind}/${n.name}`));
  const fromPlan = madeFromPlans([
    ...fromFiles.plans.map((p) => p.metadata.name),
    ...cluster.objects.filter((o) => o.kind === 'MaintenancePlan').map(nameOf),
  ]);
  let replaced = 0;
  let composed = 0;
  const kept = cluster.objects.filter((o) => {
    if (given.has(`${String(o.kind)}/${nameOf(o)}`)) return (replaced++, false);
    if (!options.keepComposedPolicies && o.kind === 'RotationPolicy' && fromPlan(o)) return (composed++, false);
    return true;
  });
  for (const line of cluster.notes) note(line);
  if (replaced > 0)
    note(`note: ${replaced} object(s) from -f replace the ${cluster.source}'s of the same kind and name`);
  if (composed > 0)
    note(`note: ${composed} RotationPolicy(ies) composed from MaintenancePlans are computed from the plans instead`);
  // The files were read once, above; the cluster's objects go first, as they are what the files change.
  return mergeInputs(readDocuments([], [{ name: cluster.source, values: kept }]), fromFiles);
}

/**
 * Whether a RotationPolicy was made from one of the MaintenancePlans named: composed by Crossplane (its composite
 * label or its owner) or expanded by `render` and applied (the plan label the expansion writes, the plan's name
 * shortened past 63 characters).
 */
export function madeFromPlans(names: Iterable<string>): (o: object) => boolean {
  const keys = new Set([...names].flatMap((n) => [n, planLabelValue(n)]));
  return (o) => {
    const meta = ((o as { metadata?: unknown }).metadata ?? {}) as {
      labels?: Record<string, string>;
      ownerReferences?: { kind?: string; name?: string }[];
    };
    const labels = meta.labels ?? {};
    return (
      [labels['crossplane.io/composite'], labels[PLAN_LABEL]].some((v) => v !== undefined && keys.has(v)) ||
      (meta.ownerReferences ?? []).some((r) => r.kind === 'MaintenancePlan' && keys.has(r.name ?? ''))
    );
  };
}
